#!/bin/sh
# section.sh repo commit sha name path
repo=$1; commit=$2; sha=$3; name=$4; path=$5
GD=${MIRRORS:?MIRRORS: the folder of fetched snapshots}/$(echo $repo | tr / +)/repo; [ -d $GD/.git ] && GD=$GD/.git
F=${CORPUS:?CORPUS: the corpus folder}/$name
last=$(git --git-dir=$GD log -1 --format='%H, %cI' $commit -- "$path")
blob=$(git --git-dir=$GD rev-parse "$commit:$path")
lic=$(git --git-dir=$GD ls-tree --name-only $commit | grep -i '^licen[cs]e\|^copying' | head -1)
if [ -n "$lic" ]; then lt=$(git --git-dir=$GD show $commit:$lic | head -3 | tr '\n' ' ' | cut -c1-60); lic="$lic: $lt"; else lic="none stated (no LICENSE file at that commit)"; fi
echo "### $name"; echo
echo "- Source: https://github.com/$repo, path \`$path\`"
echo "- Extracted from commit \`$commit\` (last commit touching the file: \`$last\`); git blob \`$blob\`"
echo "- License: $lic"
echo "- Size: $(stat -c %s $F) bytes; sha256 \`$sha\`"
echo "- Format: capinfos \`$(capinfos -t $F 2>/dev/null | sed -n 's/^File type: *//p')\` / \`$(capinfos -E $F 2>/dev/null | sed -n 's/^File encapsulation: *//p')\`"
echo "- Packets: $(capinfos -M -c $F 2>/dev/null | sed -n 's/^Number of packets: *//p'); first $(capinfos -a $F | sed -n 's/^First packet time: *//p'), last $(capinfos -e $F | sed -n 's/^Last packet time: *//p'); duration $(capinfos -u $F | sed -n 's/^Capture duration: *//p')"
echo "- Protocols (tshark io,phs frames): $(nice -n 19 tshark -r $F -o 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""' -q -z io,phs 2>/dev/null | grep 'frames:' | awk '{sub("frames:","",$2); printf "%s %s, ", $1, $2}' | sed 's/, $//')"
echo "- tshark facts:"
/tmp/facts.sh $F | grep -v ': *$' | grep -v 'CONNECT_IND: 0; LL encrypted-flag pkts: 0; MIC bad: 0' | grep -v 'conn-complete(0x03) status:  auth-complete(0x06):  simple-pairing-complete(0x36):  link-key-req(0x17): 0 link-key-neg-reply(0x040c): 0' | sed 's/^/  - /'
