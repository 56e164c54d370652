import BLEAnalysis
import BLECore

/// The page's searchable timeline: every event of the capture (``EmbeddedTimeline``, gzipped in the page), filtered by
/// layer, connection, ATT handle, direction, severity, time (typed, or brushed on the links chart) and text, drawn a screenful at a time (only the rows in
/// view are in the document, so 100,000 events scroll as 100 do). `#frame=N` (`#file2:frame=N` for a second capture)
/// opens it at frame N; a finding's marks and links scroll it to their frame.
///
/// The script is hand-written, inline, and fetches nothing: the data is in the page, inflated by the browser's own
/// `DecompressionStream` (Chromium 80, Firefox 113, Safari 16.4).
extension HTMLReport {
    static let timelineCSS = """
        .tl-filters{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:4px 0}
        .tl-filters input,.tl-filters select{font:12px inherit;padding:2px 4px}
        .tl-view{height:440px;overflow:auto;position:relative;border:1px solid #dfe4ea;background:#fff}
        .tl-rows{position:absolute;left:0;right:0;top:0}
        .tl-r,.tl-h{display:flex;height:20px;line-height:20px;font:12px "DejaVu Sans Mono",Menlo,Consolas,monospace;white-space:nowrap}
        .tl-h{font-weight:600;background:#eef2f6;border:1px solid #dfe4ea;border-bottom:0}
        .tl-r:nth-child(even){background:#f7f9fb}.tl-r span,.tl-h span{padding:0 5px;overflow:hidden;text-overflow:ellipsis}
        .tl-r .f,.tl-h .f{width:64px;text-align:right}.tl-r .t,.tl-h .t{width:92px;text-align:right}
        .tl-r .c,.tl-h .c{width:40px}.tl-r .d,.tl-h .d{width:22px}.tl-r .l,.tl-h .l{width:44px}
        .tl-r .h,.tl-h .h{width:58px}.tl-r .w,.tl-h .w{flex:1}
        .tl-r.s2{background:#fdf6ec}.tl-r.s3,.tl-r.s4{background:#fcefef}.tl-r.hl{outline:2px solid #1f6feb;outline-offset:-2px;background:#e8f0fe}
        """

    /// The timeline section of file `index`: filters, the header, the scrolled view, the data.
    static func searchableTimeline(_ f: FileAnalysis, index: Int) -> String {
        guard let t = f.timeline, t.count > 0 else { return "" }
        var out = "<span id=\"file\(index)-timeline\"></span><h3>Timeline</h3>"
        out += "<div class=\"tl\" id=\"tl\(index)\" data-file=\"\(index)\" data-events=\"\(t.count)\">"
        out += "<p class=\"muted\">Every event of the capture (\(formatCount(t.count))"
        out += t.cutAtFrame.map { "; the first ones: the capture has more from frame \($0) on)" } ?? ")"
        out += ". Filter below; a link <span class=\"mono\">#frame=N</span> opens it at frame N.</p>"
        out += "<div class=\"tl-filters\"><select data-f=\"layer\" title=\"layer\"><option value=\"\">all layers</option></select>"
        out += "<input data-f=\"conn\" placeholder=\"conn #\" size=\"6\" title=\"connection number\">"
        out += "<input data-f=\"handle\" placeholder=\"ATT handle\" size=\"9\" title=\"ATT handle (0x002a or 42)\">"
        out += "<select data-f=\"dir\" title=\"direction\"><option value=\"\">both ways</option><option value=\"1\">→ sent</option>"
        out += "<option value=\"2\">← received</option></select>"
        out += "<select data-f=\"sev\" title=\"severity of a finding on the frame\"><option value=\"\">any severity</option>"
        out +=
            "<option value=\"1\">info and worse</option><option value=\"2\">warning and worse</option><option value=\"3\">error and worse</option></select>"
        out += "<input data-f=\"from\" placeholder=\"from s\" size=\"7\" title=\"seconds from the first record\">"
        out += "<input data-f=\"to\" placeholder=\"to s\" size=\"7\" title=\"seconds from the first record\">"
        out += "<input data-f=\"text\" type=\"search\" placeholder=\"search text\" size=\"22\">"
        out += "<span class=\"tl-count muted\">loading…</span></div>"
        out += "<div class=\"tl-h\"><span class=\"f\">frame</span><span class=\"t\">+s</span><span class=\"c\">conn</span>"
        out += "<span class=\"d\"></span><span class=\"l\">layer</span><span class=\"h\">handle</span><span class=\"w\">event</span></div>"
        out += "<div class=\"tl-view\"><div class=\"tl-spacer\"></div><div class=\"tl-rows\"></div></div>"
        out += "<script type=\"application/octet-stream\" class=\"tl-data\" data-encoding=\"gzip+base64\">"
        out += t.gzipBase64() + "</script></div>"
        return out
    }

    /// The script of every timeline on the page (one copy, at its end).
    static let timelineScript = #"""
        (function(){"use strict";
        var RH=20,SEV={info:1,warning:2,error:3,critical:4},byFile={};
        function esc(s){return s.replace(/[&<>"]/g,function(c){return {"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c];});}
        function inflate(b64){var s=atob(b64),u=new Uint8Array(s.length);for(var i=0;i<s.length;i++)u[i]=s.charCodeAt(i);
        return new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream("gzip"))).json();}
        function load(root){return inflate(root.querySelector(".tl-data").textContent.trim()).then(function(j){
        var n=j.f.length,F=new Int32Array(n),T=new Float64Array(n),f=j.f0,t=0,i,mk={},note={};
        for(i=0;i<n;i++){f+=j.f[i];t+=j.t[i];F[i]=f;T[i]=t/1e6;}
        j.x.forEach(function(m){var s=SEV[m[1]]||1;if(!(mk[m[0]]>=s))mk[m[0]]=s;note[m[0]]=(note[m[0]]?note[m[0]]+"\n":"")+m[1]+": "+m[2];});
        var sev=new Uint8Array(n);for(i=0;i<n;i++)sev[i]=mk[F[i]]||0;
        var tl={root:root,j:j,n:n,F:F,T:T,sev:sev,note:note,low:j.s.map(function(s){return s.toLowerCase();}),hi:-1,
        view:root.querySelector(".tl-view"),box:root.querySelector(".tl-rows"),spacer:root.querySelector(".tl-spacer")};
        var layers={},sel=root.querySelector("[data-f=layer]");for(i=0;i<n;i++)layers[j.l[i]]=1;
        Object.keys(layers).map(Number).sort(function(a,b){return j.s[a]<j.s[b]?-1:1;}).forEach(function(k){
        var o=document.createElement("option");o.value=k;o.textContent=j.s[k];sel.appendChild(o);});
        root.querySelectorAll("[data-f]").forEach(function(e){e.addEventListener("input",function(){apply(tl);});});
        tl.view.addEventListener("scroll",function(){render(tl);});
        apply(tl);root.dataset.readyMs=Math.round(performance.now());root.dataset.ready="1";return tl;});}
        function what(n,m){return m.indexOf(n)===0?m:m?n+" "+m:n;}
        function num(v,hex){if(v==="")return -1;var x=hex||/^0x|[a-f]/i.test(v)?parseInt(v.replace(/^0x/i,""),16):parseInt(v.replace("#",""),10);return isNaN(x)?-2:x;}
        function apply(tl){var q={},j=tl.j,n=tl.n,out=new Int32Array(n),k=0,i,s;
        tl.root.querySelectorAll("[data-f]").forEach(function(e){q[e.dataset.f]=e.value.trim();});
        var layer=q.layer===""?-1:+q.layer,conn=num(q.conn,false),h=num(q.handle,false),dir=q.dir===""?-1:+q.dir,
        sv=q.sev===""?0:+q.sev,from=q.from===""?-Infinity:+q.from,to=q.to===""?Infinity:+q.to,text=q.text.toLowerCase(),hit=null;
        if(text){hit=new Uint8Array(j.s.length);for(s=0;s<j.s.length;s++)hit[s]=tl.low[s].indexOf(text)>=0?1:0;}
        for(i=0;i<n;i++){if(layer>=0&&j.l[i]!==layer||conn!==-1&&j.c[i]!==conn||h!==-1&&j.h[i]!==h||dir>=0&&j.d[i]!==dir)continue;
        if(sv&&tl.sev[i]<sv||tl.T[i]<from||tl.T[i]>to)continue;if(hit&&!hit[j.n[i]]&&!hit[j.m[i]]&&!hit[j.l[i]])continue;out[k++]=i;}
        tl.rows=out.subarray(0,k);tl.spacer.style.height=k*RH+"px";
        tl.root.querySelector(".tl-count").textContent=k+" of "+n+" events"+(j.cut?" (more from frame "+j.cut+" on are not in the page)":"");
        var at=tl.hi>=0?find(tl,tl.hi):-1;tl.view.scrollTop=at>=0&&tl.F[tl.rows[at]]===tl.hi?Math.max(0,at*RH-3*RH):0;
        tl.root.dataset.rows=k;render(tl);}
        function render(tl){var v=tl.view,j=tl.j,a=Math.max(0,Math.floor(v.scrollTop/RH)-4),
        b=Math.min(tl.rows.length,Math.ceil((v.scrollTop+v.clientHeight)/RH)+4),html=[],r,i,f,nt;
        for(r=a;r<b;r++){i=tl.rows[r];f=tl.F[i];nt=tl.note[f];
        html.push('<div class="tl-r s'+tl.sev[i]+(f===tl.hi?" hl":"")+'" data-frame="'+f+'"'+(nt?' title="'+esc(nt)+'"':"")+
        '><span class="f">'+f+'</span><span class="t">'+tl.T[i].toFixed(6)+'</span><span class="c">'+(j.c[i]?"#"+j.c[i]:"")+
        '</span><span class="d">'+(j.d[i]===1?"→":j.d[i]===2?"←":"·")+'</span><span class="l">'+esc(j.s[j.l[i]])+'</span><span class="h">'+
        (j.h[i]?"0x"+("000"+j.h[i].toString(16)).slice(-4):"")+'</span><span class="w">'+esc(what(j.s[j.n[i]],j.s[j.m[i]]))+"</span></div>");}
        tl.box.style.transform="translateY("+a*RH+"px)";tl.box.innerHTML=html.join("");}
        function find(tl,frame){var rows=tl.rows,r,best=-1;for(r=0;r<rows.length;r++){var f=tl.F[rows[r]];
        if(f===frame)return r;if(f>frame&&best<0)best=r;}return best;}
        function goto(tl,frame){var r=find(tl,frame);if(r<0||tl.F[tl.rows[r]]!==frame){
        tl.root.querySelectorAll("[data-f]").forEach(function(e){e.value="";});apply(tl);r=find(tl,frame);}
        tl.hi=frame;tl.root.dataset.frame=frame;tl.view.scrollTop=Math.max(0,r*RH-3*RH);render(tl);}
        function fileOf(e){var s=e.closest("section.file");return s?+s.id.replace("file",""):1;}
        function onHash(){var m=/^#(?:file(\d+):)?frame=(\d+)$/.exec(location.hash),d=/^#file(\d+)-d(\d+)$/.exec(location.hash);
        if(m&&byFile[m[1]||1])byFile[m[1]||1].then(function(t){goto(t,+m[2]);t.root.scrollIntoView();});
        else if(d&&byFile[d[1]])byFile[d[1]].then(function(t){goto(t,+d[2]);});}
        function brush(svg){var p=byFile[svg.id.replace(/^file(\d+)-links$/,"$1")],L=+svg.dataset.plotLeft,W=+svg.dataset.plotWidth,
        S=+svg.dataset.span,r=null,x0=0;if(!p)return;
        function at(ev){var q=svg.createSVGPoint();q.x=ev.clientX;q.y=ev.clientY;return Math.max(L,Math.min(L+W,q.matrixTransform(svg.getScreenCTM().inverse()).x));}
        svg.addEventListener("mousedown",function(ev){if(ev.target.closest("a"))return;svg.querySelectorAll(".brush").forEach(function(b){b.remove();});
        x0=at(ev);r=document.createElementNS(svg.namespaceURI,"rect");r.setAttribute("class","brush");r.setAttribute("y",0);
        r.setAttribute("height",svg.viewBox.baseVal.height);r.setAttribute("x",x0);r.setAttribute("width",0);svg.appendChild(r);ev.preventDefault();});
        svg.addEventListener("mousemove",function(ev){if(!r)return;var x=at(ev);r.setAttribute("x",Math.min(x0,x));r.setAttribute("width",Math.abs(x-x0));});
        window.addEventListener("mouseup",function(ev){if(!r)return;var x=at(ev),a=Math.min(x0,x),b=Math.max(x0,x),s=r;r=null;
        if(b-a<3){s.remove();return;}p.then(function(t){t.root.querySelector("[data-f=from]").value=((a-L)/W*S).toFixed(3);
        t.root.querySelector("[data-f=to]").value=((b-L)/W*S).toFixed(3);apply(t);});});}
        document.querySelectorAll(".tl").forEach(function(root){byFile[root.dataset.file]=load(root);});
        document.querySelectorAll("svg.links").forEach(brush);
        document.addEventListener("click",function(ev){var a=ev.target.closest&&ev.target.closest("[data-frame]");
        if(!a||a.closest(".tl"))return;var p=byFile[fileOf(a)];if(p)p.then(function(t){goto(t,+a.dataset.frame);});});
        window.addEventListener("hashchange",onHash);onHash();})();
        """#
}
