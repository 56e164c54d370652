#!/usr/bin/env python3
"""story.py FILE OUT.md -- a 'story from tshark alone': links, how each ended, pairing/encryption, failures.
Every point cites frames; every cited frame is re-read with `tshark -V` and the point is kept only if the
expected text is in that frame's verbose dissection (dropped points are listed at the end)."""
import collections, os, re, subprocess, sys

F, OUT = sys.argv[1], sys.argv[2]
UDLT = ['-o', 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""']
VALID = '!(nordic_ble.crcok == 0) && !btle.crc.incorrect'
MAXLIST = 12


def tshark(args):
    return subprocess.run(['nice', '-n', '19', 'tshark', '-r', F] + UDLT + args,
                          capture_output=True, text=True).stdout


def rows(flt, fields):
    out = tshark(['-Y', flt, '-T', 'fields', '-E', 'occurrence=f', '-E', 'separator=\t']
                 + [a for f in ['frame.number', 'frame.time_relative'] + fields for a in ('-e', f)])
    res = []
    for line in out.splitlines():
        c = line.split('\t')
        res.append(dict(zip(['n', 't'] + fields, c)))
    return res


def h(v):
    try:
        return int(v, 0)
    except (TypeError, ValueError):
        return None


points = []  # (text, [(frame, regex)])


def dirn(r, checks):
    d = r.get('nordic_ble.direction', '')
    if d in ('1', 'True'):
        checks.append((r['n'], r'Direction: Master -> Slave'))
        return ' (central→peripheral, nRF Sniffer direction bit)'
    if d in ('0', 'False'):
        checks.append((r['n'], r'Direction: Slave -> Master'))
        return ' (peripheral→central, nRF Sniffer direction bit)'
    if r.get('bthci_acl.chandle'):
        p, t = r.get('frame.p2p_dir', ''), h(r.get('packetlogger.type', ''))
        if p == '0' or t == 0x02:
            checks.append((r['n'], r'Point-to-Point Direction: Sent|Type: Sent ACL Data'))
            return ' (sent by the capturing host)'
        if p == '1' or t == 0x03:
            checks.append((r['n'], r'Point-to-Point Direction: Received|Type: Recv ACL Data'))
            return ' (received from the peer)'
    return ''


def point(text, checks):
    points.append((text, checks))


# ---------------------------------------------------------------- names
HCI_ERR = {0x00: 'Success', 0x02: 'Unknown Connection Identifier', 0x04: 'Page Timeout', 0x05: 'Authentication Failure',
           0x06: 'PIN or Key Missing', 0x08: 'Connection Timeout', 0x0C: 'Command Disallowed', 0x0D: 'Limited Resources',
           0x10: 'Connection Accept Timeout Exceeded', 0x12: 'Invalid HCI Command Parameters',
           0x13: 'Remote User Terminated Connection', 0x16: 'Connection Terminated by Local Host',
           0x1A: 'Unsupported Remote Feature', 0x1F: 'Unspecified Error', 0x22: 'LMP/LL Response Timeout',
           0x28: 'Instant Passed', 0x3B: 'Unacceptable Connection Parameters', 0x3D: 'Connection Terminated due to MIC Failure',
           0x3E: 'Connection Failed to be Established', 0x01: 'Unknown HCI Command', 0x03: 'Hardware Failure',
           0x07: 'Memory Capacity Exceeded', 0x09: 'Connection Limit Exceeded', 0x0B: 'Connection Already Exists',
           0x0E: 'Connection Rejected due to Security Reasons', 0x11: 'Unsupported Feature or Parameter Value',
           0x14: 'Remote Device Terminated Connection due to Low Resources', 0x15: 'Remote Device Terminated Connection due to Power Off',
           0x19: 'Unknown LMP PDU', 0x1E: 'Invalid LMP/LL Parameters', 0x20: 'Unsupported LMP/LL Parameter Value',
           0x23: 'LMP Error Transaction Collision / LL Procedure Collision', 0x24: 'LMP PDU Not Allowed',
           0x25: 'Encryption Mode Not Acceptable', 0x29: 'Pairing With Unit Key Not Supported',
           0x2A: 'Different Transaction Collision', 0x30: 'Parameter Out Of Mandatory Range', 0x3A: 'Controller Busy',
           0x3C: 'Advertising Timeout', 0x18: 'Pairing Not Allowed', 0x17: 'Repeated Attempts', 0x0F: 'Connection Rejected due to Unacceptable BD_ADDR'}


def err(c):
    return f'0x{c:02X} ({HCI_ERR.get(c, "see spec")})'


def status_re(c):
    return rf'(Status|Reason|Error Code): .*\(0x{c:02x}\)'


# ---------------------------------------------------------------- capture facts
cap = subprocess.run(['capinfos', '-t', '-E', '-c', '-M', '-a', '-e', '-u', F], capture_output=True, text=True).stdout
def capf(key):
    m = re.search(rf'^{key}:\s*(.*)$', cap, re.M)
    return m.group(1).strip() if m else '?'

lines = [f'# Story of `{os.path.basename(F)}` (tshark 4.0.17 alone)', '',
         f'- Capture: {capf("File type")}, encapsulation {capf("File encapsulation")}; {capf("Number of packets")} packets, '
         f'{capf("First packet time")} to {capf("Last packet time")} ({capf("Capture duration")}).']
phs = [l.split() for l in tshark(['-q', '-z', 'io,phs']).splitlines() if 'frames:' in l and not l.startswith(' ' * 6)]
lines.append('- Protocols (tshark io,phs, top levels): ' + ', '.join(f'{p[0]} {p[1].split(":")[1]}' for p in phs) + '.')

# ---------------------------------------------------------------- HCI side
ev = rows('bthci_evt', ['bthci_evt.code', 'bthci_evt.le_meta_subevent', 'bthci_evt.status', 'bthci_evt.connection_handle',
                        'bthci_evt.bd_addr', 'bthci_evt.reason', 'bthci_evt.role', 'bthci_evt.encryption_enable',
                        'bthci_evt.opcode', 'bthci_evt.comp_id'])
if ev:
    ver = [r for r in ev if h(r['bthci_evt.code']) == 0x0E and h(r['bthci_evt.opcode']) == 0x1001 and r['bthci_evt.comp_id']]
    if ver:
        r = ver[0]
        point(f'Controller: Read Local Version Information answered at frame {r["n"]}, manufacturer {r["bthci_evt.comp_id"]}.',
              [(r['n'], r'Manufacturer Name: .*\(' + re.escape(r['bthci_evt.comp_id']) + r'\)')])
    conns = collections.OrderedDict()
    fails = collections.defaultdict(list)
    for r in ev:
        code, sub, st = h(r['bthci_evt.code']), h(r['bthci_evt.le_meta_subevent']), h(r['bthci_evt.status'])
        kind = 'LE' if code == 0x3E and sub in (0x01, 0x0A) else 'BR/EDR' if code == 0x03 else None
        if kind:
            if st == 0:
                conns[(r['bthci_evt.connection_handle'], r['n'])] = dict(open=r, kind=kind, end=None, enc=[])
            else:
                fails[(kind, st)].append(r)
    # map disconnections and encryption changes to the open link with that handle
    def link_for(handle, n):
        cand = [k for k in conns if k[0] == handle and int(k[1]) < int(n)]
        return conns[cand[-1]] if cand else None
    orphans = []
    for r in ev:
        code = h(r['bthci_evt.code'])
        if code == 0x05:
            l = link_for(r['bthci_evt.connection_handle'], r['n'])
            if l and l['end'] is None:
                l['end'] = r
            else:
                orphans.append(r)
        elif code == 0x08:
            l = link_for(r['bthci_evt.connection_handle'], r['n'])
            if l is not None:
                l['enc'].append(r)
    if conns:
        point(f'{len(conns)} successful connection(s) (LE Connection Complete / LE Enhanced Connection Complete / '
              f'BR/EDR Connection Complete with status 0x00).', [])
    shown = 0
    reasons = collections.Counter()
    for (handle, n), l in conns.items():
        o, e = l['open'], l['end']
        if e:
            reasons[h(e['bthci_evt.reason'])] += 1
        interesting = (e is None) or h(e['bthci_evt.reason']) not in (0x13, 0x16)
        if shown >= MAXLIST and not interesting:
            continue
        shown += 1
        hh = h(handle)
        txt = f'{l["kind"]} link handle 0x{hh:04X} to {o["bthci_evt.bd_addr"] or "(address not shown)"} opened at frame {o["n"]}'
        chk = [(o['n'], r'Connection Handle: 0x0*%x\b' % hh)]
        if o['bthci_evt.role']:
            ro = h(o['bthci_evt.role'])
            txt += f' (role 0x{ro:02X}: the capturing side is {"central" if ro == 0 else "peripheral"})'
            chk.append((o['n'], r'Role: .*\(0x%02x\)' % ro))
        for enc in l['enc'][:2]:
            st = h(enc['bthci_evt.status'])
            txt += f'; Encryption Change at {enc["n"]} status {err(st)}, encryption {"on" if enc["bthci_evt.encryption_enable"] not in ("0", "0x00", "") else "off"}'
            chk.append((enc['n'], status_re(st)))
        if e:
            rs = h(e['bthci_evt.reason'])
            txt += f'; ended by Disconnection Complete at frame {e["n"]} ({float(e["t"]) - float(o["t"]):.3f} s later), reason {err(rs)}.'
            chk.append((e['n'], rf'Reason: .*\(0x{rs:02x}\)'))
        else:
            txt += '; no Disconnection Complete for it before the end of the capture.'
        point(txt, chk)
    if len(conns) > shown:
        point(f'... {len(conns) - shown} more links (each ended with 0x13 or 0x16) not listed one by one; Disconnection Complete reasons over all links: '
              + ', '.join(f'{err(k)} ×{v}' for k, v in sorted(reasons.items())) + '.', [])
    for r in orphans[:MAXLIST]:
        rs = h(r['bthci_evt.reason'])
        point(f'Disconnection Complete at frame {r["n"]} for handle {r["bthci_evt.connection_handle"]}, whose connection '
              f'complete is not in the capture (or already ended), reason {err(rs)}.',
              [(r['n'], rf'Reason: .*\(0x{rs:02x}\)')])
    for (kind, st), rs in sorted(fails.items(), key=lambda kv: int(kv[1][0]['n'])):
        fr = [r['n'] for r in rs]
        addrs = sorted({r['bthci_evt.bd_addr'] for r in rs if r['bthci_evt.bd_addr']})
        more = f' (frames {", ".join(fr[:MAXLIST])}{" ..." if len(fr) > MAXLIST else ""})'
        point(f'{len(rs)} {kind} connection attempt(s) failed with Connection Complete status {err(st)}{more}'
              + (f'; peer address(es): {", ".join(addrs[:6])}{" ..." if len(addrs) > 6 else ""}' if addrs else '') + '.',
              [(f, status_re(st)) for f in fr[:3]])
    # other error statuses: encryption change errors, command status / complete errors, auth/ssp complete
    enc_err = [r for r in ev if h(r['bthci_evt.code']) == 0x08 and h(r['bthci_evt.status'])]
    for r in enc_err[:MAXLIST]:
        st = h(r['bthci_evt.status'])
        point(f'Encryption Change with error status {err(st)} at frame {r["n"]}.', [(r['n'], status_re(st))])
    for code, name in ((0x06, 'Authentication Complete'), (0x36, 'Simple Pairing Complete'), (0x0F, 'Command Status')):
        bad = [r for r in ev if h(r['bthci_evt.code']) == code and h(r['bthci_evt.status'])]
        by = collections.defaultdict(list)
        for r in bad:
            by[(h(r['bthci_evt.status']), r['bthci_evt.opcode'])].append(r['n'])
        for (st, op), fr in sorted(by.items(), key=lambda kv: int(kv[1][0])):
            point(f'{name} with status {err(st)}' + (f' for command opcode {op}' if op and code == 0x0F else '')
                  + f' at frame(s) {", ".join(fr[:MAXLIST])}{" ..." if len(fr) > MAXLIST else ""}.',
                  [(f, status_re(st)) for f in fr[:3]])
    for code, name in ((0x06, 'Authentication Complete'), (0x36, 'Simple Pairing Complete')):
        good = [r['n'] for r in ev if h(r['bthci_evt.code']) == code and h(r['bthci_evt.status']) == 0]
        if good:
            point(f'{name} with status 0x00 (Success) at frame(s) {", ".join(good[:MAXLIST])}.', [(f, status_re(0)) for f in good[:3]])
    cc = [r for r in ev if h(r['bthci_evt.code']) == 0x0E and h(r['bthci_evt.status'])]
    by = collections.defaultdict(list)
    for r in cc:
        by[(r['bthci_evt.opcode'], h(r['bthci_evt.status']))].append(r['n'])
    for (op, st), fr in sorted(by.items(), key=lambda kv: int(kv[1][0])):
        point(f'Command Complete for opcode {op} with status {err(st)}: {len(fr)}× (frames {", ".join(fr[:6])}{" ..." if len(fr) > 6 else ""}).',
              [(f, status_re(st)) for f in fr[:2]])
    covered = {0x03, 0x05, 0x08, 0x06, 0x36, 0x0F, 0x0E}
    other = [r for r in ev if h(r['bthci_evt.status']) and h(r['bthci_evt.code']) not in covered
             and not (h(r['bthci_evt.code']) == 0x3E and h(r['bthci_evt.le_meta_subevent']) in (0x01, 0x0A))]
    by = collections.defaultdict(list)
    for r in other:
        key = (h(r['bthci_evt.code']), h(r['bthci_evt.le_meta_subevent']) if h(r['bthci_evt.code']) == 0x3E else None, h(r['bthci_evt.status']))
        by[key].append(r['n'])
    for (code, sub, st), fr in sorted(by.items(), key=lambda kv: int(kv[1][0])):
        EVN = {0x14: 'Mode Change', 0x12: 'Role Change', 0x0B: 'Read Remote Supported Features Complete', 0x07: 'Remote Name Request Complete',
               0x0C: 'Read Remote Version Information Complete', 0x30: 'Encryption Key Refresh Complete', 0x23: 'Read Remote Extended Features Complete',
               0x09: 'Change Connection Link Key Complete', 0x2C: 'Synchronous Connection Complete', 0x1C: 'Read Clock Offset Complete'}
        LEN = {0x03: 'LE Connection Update Complete', 0x04: 'LE Read Remote Features Complete', 0x0C: 'LE PHY Update Complete'}
        name = (LEN.get(sub, 'LE Meta') + f' (0x3E/0x{sub:02X})') if sub is not None else (EVN.get(code, 'event') + f' (0x{code:02X})')
        point(f'HCI {name} with status {err(st)}: {len(fr)}× (frames {", ".join(fr[:MAXLIST])}{" ..." if len(fr) > MAXLIST else ""}).',
              [(f, status_re(st)) for f in fr[:3]])
    hw = [r['n'] for r in ev if h(r['bthci_evt.code']) == 0x10]
    if hw:
        point(f'Hardware Error event at frame(s) {", ".join(hw[:MAXLIST])}.', [(f, r'Hardware Error') for f in hw[:3]])
    cmd = rows('bthci_cmd.opcode == 0x040c || bthci_cmd.opcode == 0x040e || bthci_cmd.opcode == 0x042c || bthci_cmd.opcode == 0x0434', ['bthci_cmd.opcode'])
    names = {0x040C: 'Link Key Request Negative Reply', 0x040E: 'PIN Code Request Negative Reply',
             0x042C: 'User Confirmation Request Negative Reply', 0x0434: 'IO Capability Request Negative Reply'}
    by = collections.defaultdict(list)
    for r in cmd:
        by[h(r['bthci_cmd.opcode'])].append(r['n'])
    for op, fr in by.items():
        point(f'Host sent {names[op]} at frame(s) {", ".join(fr[:MAXLIST])}.', [(f, names[op]) for f in fr[:3]])

# ---------------------------------------------------------------- air side (link layer)
air = rows(f'(btle.advertising_header.pdu_type == 0x05 || btle.advertising_header.pdu_type == 0x08 || btle.control_opcode) && {VALID}',
           ['btle.advertising_header.pdu_type', 'btle.link_layer_data.access_address', 'btle.access_address',
            'btle.control_opcode', 'btle.control.error_code', 'btle.control.reject_opcode',
            'btle.data_header.sequence_number', 'btle.data_header.next_expected_sequence_number', 'nordic_ble.direction',
            'btle.link_layer_data.interval', 'btle.link_layer_data.timeout', 'nordic_ble.micok'])
ENC_START = collections.defaultdict(list)   # aa -> frames of LL_START_ENC_REQ
CONN_REQ = collections.defaultdict(list)    # aa -> frames of connect requests
for r in air:
    if h(r['btle.control_opcode']) == 0x05:
        ENC_START[r['btle.access_address']].append(int(r['n']))
    elif r['btle.control_opcode'] == '' and r['btle.link_layer_data.access_address']:
        CONN_REQ[r['btle.link_layer_data.access_address']].append(int(r['n']))


def after_enc(r):
    aa, n = r.get('btle.access_address', ''), int(r['n'])
    starts = [f for f in ENC_START.get(aa, []) if f + 1 < n]
    if not starts:
        return False
    if any(starts[-1] < c < n for c in CONN_REQ.get(aa, [])):
        return False
    return r.get('nordic_ble.micok', '') not in ('1', 'True')
skipped = [r for r in air if r['btle.control_opcode'] and after_enc(r)]
air = [r for r in air if not (r['btle.control_opcode'] and after_enc(r))]
if skipped:
    point(f'{len(skipped)} packet(s) that tshark reads as LL control PDUs come after LL_START_ENC_REQ on their access address and were not decrypted '
          f'(no nRF Sniffer MIC OK): their opcodes are encrypted bytes, left out below (first {skipped[0]["n"]}).', [])
if air:
    links = collections.OrderedDict()
    for r in air:
        if r['btle.control_opcode'] == '' and h(r['btle.advertising_header.pdu_type']) in (0x05, 0x08):
            aa = r['btle.link_layer_data.access_address']
            if aa:
                links.setdefault(aa, []).append(r)
    ctrl = [r for r in air if r['btle.control_opcode']]
    by_aa = collections.defaultdict(list)
    for r in ctrl:
        by_aa[r['btle.access_address']].append(r)
    if links:
        point(f'{sum(len(v) for v in links.values())} connect request(s) (CONNECT_IND/AUX_CONNECT_REQ with a good CRC) for '
              f'{len(links)} access address(es).', [])
    LLN = {0x00: 'LL_CONNECTION_UPDATE_IND', 0x01: 'LL_CHANNEL_MAP_IND', 0x02: 'LL_TERMINATE_IND', 0x03: 'LL_ENC_REQ',
           0x04: 'LL_ENC_RSP', 0x05: 'LL_START_ENC_REQ', 0x06: 'LL_START_ENC_RSP', 0x07: 'LL_UNKNOWN_RSP',
           0x0A: 'LL_PAUSE_ENC_REQ', 0x0B: 'LL_PAUSE_ENC_RSP', 0x0D: 'LL_REJECT_IND', 0x11: 'LL_REJECT_EXT_IND',
           0x14: 'LL_LENGTH_REQ', 0x15: 'LL_LENGTH_RSP', 0x16: 'LL_PHY_REQ', 0x17: 'LL_PHY_RSP', 0x18: 'LL_PHY_UPDATE_IND'}
    all_aas = list(links.keys()) + [a for a in by_aa if a not in links]
    for aa in all_aas[:MAXLIST]:
        reqs = links.get(aa, [])
        cs = by_aa.get(aa, [])
        txt = f'Link on access address {aa}'
        chk = []
        if reqs:
            r = reqs[0]
            txt += f': connect request at frame {r["n"]}' + (f' ({len(reqs)} connect requests reuse this address)' if len(reqs) > 1 else '')
            if r['btle.link_layer_data.interval']:
                txt += f', interval {r["btle.link_layer_data.interval"]} (×1.25 ms), supervision timeout {r["btle.link_layer_data.timeout"]} (×10 ms)'
            chk.append((r['n'], re.escape(aa[2:]) if aa.startswith('0x') else re.escape(aa)))
        else:
            txt += ' (its connect request is not in the capture)'
        interesting = [c for c in cs if h(c['btle.control_opcode']) in (0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0A, 0x0B, 0x0D, 0x11, 0x14, 0x15, 0x07, 0x18)]
        parts = []
        for c in interesting[:20]:
            op = h(c['btle.control_opcode'])
            s = f'{LLN.get(op, hex(op))} {c["n"]}'
            if op in (0x02, 0x0D, 0x11, 0x03, 0x05):
                s += dirn(c, chk).replace(', nRF Sniffer direction bit', '')
            if op in (0x02, 0x0D, 0x11) and c['btle.control.error_code']:
                ec = h(c['btle.control.error_code'])
                s += f' (error {err(ec)})'
                chk.append((c['n'], rf'Error Code: .*\(0x{ec:02x}\)'))
            else:
                chk.append((c['n'], re.escape(LLN.get(op, 'Control Opcode'))))
            parts.append(s)
        if parts:
            txt += '; LL control: ' + ', '.join(parts) + (' ...' if len(interesting) > 20 else '')
        term = [c for c in cs if h(c['btle.control_opcode']) == 0x02]
        point(txt + '.', chk)
        for t in term[:3]:
            # what follows on the same access address: acknowledged or not
            nxt = rows(f'btle.access_address == {aa} && frame.number > {t["n"]} && {VALID}',
                       ['btle.data_header.sequence_number', 'btle.data_header.next_expected_sequence_number', 'nordic_ble.direction'])
            sn = h(t['btle.data_header.sequence_number'])
            after = [x for x in nxt if x['nordic_ble.direction'] != t['nordic_ble.direction'] or t['nordic_ble.direction'] == '']
            if not nxt:
                point(f'LL_TERMINATE_IND at frame {t["n"]} (SN {sn}) is the last good packet on {aa}: tshark shows no acknowledgement of it.',
                      [(t['n'], r'LL_TERMINATE_IND')])
            elif after:
                x = after[0]
                ack = h(x['btle.data_header.next_expected_sequence_number']) != sn
                point(f'After LL_TERMINATE_IND {t["n"]} (SN {sn}) the next packet on {aa} is frame {x["n"]} with NESN '
                      f'{x["btle.data_header.next_expected_sequence_number"]}: {"it acknowledges the terminate" if ack else "the terminate is NOT acknowledged by it"}; '
                      f'{len(nxt)} good packet(s) on that address after the terminate.',
                      [(t['n'], r'LL_TERMINATE_IND'), (x['n'], r'Next Expected Sequence Number: ' + x['btle.data_header.next_expected_sequence_number'])])
    if len(all_aas) > MAXLIST:
        point(f'... {len(all_aas) - MAXLIST} more access addresses not listed.', [])
    last = rows(f'btle.access_address != 0x8e89bed6 && {VALID}', ['btle.access_address'])
    lastby = collections.OrderedDict()
    for r in last:
        lastby[r['btle.access_address']] = r
    for aa in all_aas[:MAXLIST]:
        if aa in lastby:
            r = lastby[aa]
            point(f'Last good packet on {aa}: frame {r["n"]} at {float(r["t"]):.3f} s.', [(r['n'], re.escape(aa[2:]))])

# ---------------------------------------------------------------- SMP, ATT errors, L2CAP signalling (both sides)
VEND = ' && !(bthci_acl.chandle == 0x0edc)'
vend = rows('(btatt || btsmp) && bthci_acl.chandle == 0x0edc', [])
if vend:
    point(f'tshark decodes {len(vend)} packet(s) on ACL handle 0x0EDC as ATT/SMP (frames {", ".join(r["n"] for r in vend[:6])}{" ..." if len(vend) > 6 else ""}); '
          'no connection event in the capture names that handle (Qualcomm controllers use it for vendor debug data, per corpus/README.md), '
          'so they are left out of the SMP and ATT points below.', [])
smp = rows(f'btsmp && {VALID}' + VEND, ['btsmp.opcode', 'btsmp.reason', 'btsmp.authreq', 'bthci_acl.chandle', 'btle.access_address', 'nordic_ble.direction', 'nordic_ble.micok', 'frame.p2p_dir', 'packetlogger.type'])
if 'ENC_START' in dir():
    smp = [r for r in smp if not after_enc(r)]
SMPN = {0x01: 'Pairing Request', 0x02: 'Pairing Response', 0x03: 'Pairing Confirm', 0x04: 'Pairing Random',
        0x05: 'Pairing Failed', 0x06: 'Encryption Information', 0x07: 'Master Identification', 0x08: 'Identity Information',
        0x09: 'Identity Address Information', 0x0A: 'Signing Information', 0x0B: 'Security Request',
        0x0C: 'Pairing Public Key', 0x0D: 'Pairing DHKey Check', 0x0E: 'Pairing Keypress Notification'}
SMPR = {0x01: 'Passkey Entry Failed', 0x02: 'OOB Not Available', 0x03: 'Authentication Requirements', 0x04: 'Confirm Value Failed',
        0x05: 'Pairing Not Supported', 0x06: 'Encryption Key Size', 0x07: 'Command Not Supported', 0x08: 'Unspecified Reason',
        0x09: 'Repeated Attempts', 0x0A: 'Invalid Parameters', 0x0B: 'DHKey Check Failed', 0x0C: 'Numeric Comparison Failed'}
if smp:
    seq = []
    for r in smp:
        op = h(r['btsmp.opcode'])
        seq.append((r, op))
    starts = [r for r, op in seq if op in (0x01, 0x0B)]
    point(f'SMP: {len(smp)} PDUs; opcodes ' + ', '.join(f'{SMPN.get(k, hex(k))} ×{v}' for k, v in
          sorted(collections.Counter(op for _, op in seq).items())) + '.', [])
    for r, op in seq:
        if op in (0x01, 0x02, 0x0B, 0x05, 0x0D) and len([p for p in points if 'SMP ' in p[0] and 'frame' in p[0]]) < 3 * MAXLIST:
            where = f' (handle {r["bthci_acl.chandle"]})' if r['bthci_acl.chandle'] else (f' (AA {r["btle.access_address"]})' if r['btle.access_address'] else '')
            chk = [(r['n'], re.escape(SMPN[op]) + r' \(0x%02x\)' % op)]
            txt = f'SMP {SMPN[op]} at frame {r["n"]}{where}{dirn(r, chk)}'
            if op == 0x05:
                rc = h(r['btsmp.reason'])
                txt += f', reason 0x{rc:02X} ({SMPR.get(rc, "?")})'
                chk.append((r['n'], rf'Reason: .*\(0x{rc:02x}\)'))
            if op in (0x01, 0x02, 0x0B) and r['btsmp.authreq']:
                txt += f', AuthReq {r["btsmp.authreq"]}'
            point(txt + '.', chk)
att = rows(f'btatt.opcode == 0x01 && {VALID}' + VEND, ['btatt.req_opcode_in_error', 'btatt.error_code', 'btatt.handle', 'btle.access_address', 'nordic_ble.micok'])
if 'ENC_START' in dir():
    att = [r for r in att if not after_enc(r)]
by = collections.defaultdict(list)
for r in att:
    ec, rq = h(r['btatt.error_code']), h(r['btatt.req_opcode_in_error'])
    if ec == 0x0A and rq in (0x04, 0x06, 0x08, 0x10):
        continue
    by[(rq, ec)].append(r)
ATTE = {0x01: 'Invalid Handle', 0x02: 'Read Not Permitted', 0x03: 'Write Not Permitted', 0x05: 'Insufficient Authentication',
        0x06: 'Request Not Supported', 0x07: 'Invalid Offset', 0x08: 'Insufficient Authorization', 0x0A: 'Attribute Not Found',
        0x0D: 'Invalid Attribute Value Length', 0x0E: 'Unlikely Error', 0x0F: 'Insufficient Encryption'}
for (rq, ec), rs in sorted(by.items(), key=lambda kv: int(kv[1][0]['n'])):
    fr = [r['n'] for r in rs]
    point(f'ATT Error Response {ATTE.get(ec, hex(ec))} (0x{ec:02X}) to request opcode 0x{rq:02X}: {len(fr)}× '
          f'(frames {", ".join(fr[:8])}{" ..." if len(fr) > 8 else ""}; handle {rs[0]["btatt.handle"]} at the first).',
          [(f, rf'Error Code: .*\(0x{ec:02x}\)') for f in fr[:2]])
sig = rows(f'(btl2cap.cmd_code == 0x12 || btl2cap.cmd_code == 0x13 || btl2cap.cmd_code == 0x01) && {VALID}', ['btl2cap.cmd_code', 'btl2cap.result', 'btl2cap.move_result'])
cnt = collections.Counter()
for r in sig:
    code = h(r['btl2cap.cmd_code'])
    cnt[code] += 1
    if code == 0x13 and r['btl2cap.move_result'] not in ('', '0', '0x0000') and cnt[code] <= 4:
        point(f'L2CAP Connection Parameter Update Response at frame {r["n"]} rejects the request (result {r["btl2cap.move_result"]}).',
              [(r['n'], r'Connection Parameter Update Response')])
    if code == 0x01 and cnt[code] <= 4:
        point(f'L2CAP Command Reject at frame {r["n"]}.', [(r['n'], r'Command Reject')])
if cnt.get(0x12):
    point(f'L2CAP Connection Parameter Update Request ×{cnt[0x12]}, Response ×{cnt.get(0x13, 0)}.', [])

# ---------------------------------------------------------------- activity summary
attr = rows(f'btatt && {VALID}' + VEND, ['bthci_acl.chandle', 'btle.access_address', 'nordic_ble.micok'])
if 'ENC_START' in dir():
    attr = [r for r in attr if not after_enc(r)]
if attr:
    byk = collections.OrderedDict()
    for r in attr:
        k = ('handle ' + r['bthci_acl.chandle']) if r['bthci_acl.chandle'] else ('AA ' + r['btle.access_address']) if r['btle.access_address'] else 'unknown link'
        byk.setdefault(k, []).append(r['n'])
    for k, fr in list(byk.items())[:MAXLIST]:
        point(f'ATT traffic on {k}: {len(fr)} PDUs, frames {fr[0]} to {fr[-1]}.', [(fr[0], r'Attribute Protocol'), (fr[-1], r'Attribute Protocol')])
    if ev:
        opened = {h(l['open']['bthci_evt.connection_handle']) for l in conns.values()} if 'conns' in dir() else set()
        pre = [k for k in byk if k.startswith('handle ') and h(k.split()[1]) not in opened]
        if pre:
            point('No connection-complete event in the capture for ' + ', '.join(pre) + ': those links were opened before the capture started.', [])
acl = rows('bthci_acl', ['bthci_acl.chandle'])
if acl:
    byh = collections.OrderedDict()
    for r in acl:
        byh.setdefault(r['bthci_acl.chandle'], []).append(r['n'])
    point('ACL packets per connection handle: ' + '; '.join(f'{k} ×{len(v)} (frames {v[0]}-{v[-1]})' for k, v in list(byh.items())[:MAXLIST])
          + ('; ...' if len(byh) > MAXLIST else '') + '.', [(v[0], r'Connection Handle: 0x0*%x\b' % int(k, 16)) for k, v in list(byh.items())[:4]])
vs = rows('bthci_evt.code == 0xff', [])
if vs:
    point(f'{len(vs)} vendor-specific HCI event(s) (event code 0xFF), frames {vs[0]["n"]} to {vs[-1]["n"]}.', [(vs[0]['n'], r'Event Code: Vendor-Specific \(0xff\)')])
v2 = rows('bthci_evt.code == 0x59', [])
if v2:
    point(f'{len(v2)} HCI event(s) with code 0x59 (Encryption Change v2; tshark 4.0 shows them as "Unknown 0x59" and does not decode status or handle), frames {", ".join(r["n"] for r in v2[:MAXLIST])}{" ..." if len(v2) > MAXLIST else ""}.',
          [(r['n'], r'Event Code: Unknown \(0x59\)') for r in v2[:2]])
encf = rows('nordic_ble.encrypted == 1', ['nordic_ble.micok'])
if encf:
    bad = [r['n'] for r in encf if r['nordic_ble.micok'] in ('0', 'False')]
    point(f'nRF Sniffer flags {len(encf)} packets as encrypted (frames {encf[0]["n"]} to {encf[-1]["n"]}); {len(bad)} of them with a bad MIC'
          + (f' (first {bad[0]})' if bad else '') + '.', [(encf[0]['n'], r'Encrypted: True|encrypted: 1|Encrypted: Yes')])

# ---------------------------------------------------------------- verify with tshark -V
frames = sorted({int(f) for _, cs in points for f, _ in cs})
verbose = {}
for i in range(0, len(frames), 200):
    chunk = frames[i:i + 200]
    out = tshark(['-V', '-Y', 'frame.number in {' + ','.join(map(str, chunk)) + '}'])
    for block in re.split(r'(?m)^(?=Frame \d+: )', out):
        m = re.match(r'Frame (\d+): ', block)
        if m:
            verbose[int(m.group(1))] = block
kept, dropped = [], []
for text, cs in points:
    ok = all(re.search(rx, verbose.get(int(f), ''), re.I) for f, rx in cs)
    (kept if ok else dropped).append((text, cs))
for text, _ in kept:
    lines.append(f'- {text}')
lines.append('')
lines.append(f'Checked: every frame cited above was re-read with `tshark -V` ({len(frames)} frames) and the point kept only '
             f'if its status/reason/opcode text is in that frame; {len(dropped)} point(s) dropped.')
for text, cs in dropped:
    lines.append(f'<!-- dropped (not confirmed by -V): {text} -->')
open(OUT, 'w').write('\n'.join(lines) + '\n')
print(OUT, len(kept), 'kept', len(dropped), 'dropped')
