#!/usr/bin/env python3
"""Diagnosis-relevant events per capture, as tshark reads them, for the table in corpus/README.md.

usage: corpus/diag_events.py [--frames] FILE...

Prints one Markdown table row per file: failed connection completes, disconnections by reason,
SMP Pairing Failed, Encryption Change errors, ATT Error Responses (0x0A answering a discovery
request left out: it ends every discovery), Android quality reports (BQR), Hardware Error events,
and what only an air capture shows (LL_TERMINATE_IND reasons, LL_REJECT(_EXT)_IND codes) plus the
rarer failures (LE update completes with an error, rejected L2CAP parameter updates, ISO traffic).
With --frames it prints every event with its frame number instead (tshark's numbering).

HCI events are decoded here from their raw bytes (tshark -T json -x, `bthci_evt_raw`), not from
tshark's fields: tshark 4.0 shows LE Enhanced Connection Complete v2 (0x3E/0x29), Encryption
Change v2 (0x59) and the Android quality report (vendor event 0xFF, sub-event 0x58) as unknown.
Android reports a failed establishment as a successful completion followed by Disconnection
Complete 0x3E, and its LE completes with 0x02 are usually the host cancelling a background connect.
"""
import collections
import json
import subprocess
import sys

# crackle's PPI files carry BTLE as DLT 147; without this mapping tshark decodes nothing in them.
USER_DLT = ['-o', 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""']
DISCOVERY_REQUESTS = {0x04, 0x06, 0x08, 0x10}  # Find Information, Find By Type Value, Read By (Group) Type
CONNECTION_COMPLETES = {0x01: 'LE', 0x0A: 'LE', 0x29: 'LE'}
ISO_SUBEVENTS = {0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x22}  # CIS Established/Request, BIG ..., BIGInfo


def tshark(path, args):
    return subprocess.run(['tshark', '-r', path] + USER_DLT + args, capture_output=True, text=True).stdout


def hci_events(path):
    """(frame, event bytes) for every HCI event in the file, whatever its container."""
    out = tshark(path, ['-Y', 'bthci_evt', '-T', 'json', '-x', '-j', 'frame bthci_evt'])
    for packet in json.loads(out) if out.strip() else []:
        layers = packet['_source']['layers']
        raw = layers.get('bthci_evt_raw')
        if raw:
            yield int(layers['frame']['frame.number']), bytes.fromhex(raw[0])


def field_rows(path, display_filter, names):
    # A damaged air packet decodes as anything: leave out those whose CRC failed (nRF Sniffer's flag or tshark's).
    valid = '!(nordic_ble.crcok == 0) && !btle.crc.incorrect'
    args = ['-Y', f'({display_filter}) && {valid}', '-T', 'fields', '-E', 'occurrence=f', '-e', 'frame.number']
    for line in tshark(path, args + [a for n in names for a in ('-e', n)]).splitlines():
        cells = line.split('\t')
        yield int(cells[0]), [int(c, 0) if c else None for c in cells[1:]]


def classify_event(events, frame, event):
    code, params = event[0], event[2:]
    if code == 0x05 and len(params) >= 4:
        events['disconnection' if params[0] == 0 else 'disconnection-failed'].append((frame, params[3]))
    elif code in (0x08, 0x59) and params and params[0] != 0:
        events['encryption-error'].append((frame, params[0]))
    elif code == 0x10 and params:
        events['hardware-error'].append((frame, params[0]))
    elif code == 0x03 and params and params[0] != 0:
        events['connection-error'].append((frame, params[0], 'BR'))
    elif code == 0xFF and len(params) >= 2 and params[0] == 0x58:
        events['bqr'].append((frame, params[1]))
    elif code == 0x3E and len(params) >= 2:
        subevent, status = params[0], params[1]
        if subevent in CONNECTION_COMPLETES and status != 0:
            events['connection-error'].append((frame, status, 'LE'))
        elif subevent in (0x03, 0x0C) and status != 0:  # Connection Update / PHY Update Complete
            events['update-error'].append((frame, status))
        elif subevent in ISO_SUBEVENTS:
            events['iso-event'].append((frame, subevent))


def scan(path):
    events = collections.defaultdict(list)
    for frame, event in hci_events(path):
        if len(event) >= 2:
            classify_event(events, frame, event)
    for frame, (reason,) in field_rows(path, 'btsmp.opcode == 0x05', ['btsmp.reason']):
        events['smp-failed'].append((frame, reason))
    att = ['btatt.error_code', 'btatt.req_opcode_in_error']
    for frame, (error, request) in field_rows(path, 'btatt.opcode == 0x01', att):
        if not (error == 0x0A and request in DISCOVERY_REQUESTS):
            events['att-error'].append((frame, error))
    for frame, (result,) in field_rows(path, 'btl2cap.cmd_code == 0x13', ['btl2cap.move_result']):
        if result:
            events['l2cap-update-rejected'].append((frame, result))
    ll = 'btle.control_opcode == 0x02 || btle.control_opcode == 0x0d || btle.control_opcode == 0x11'
    for frame, (opcode, error) in field_rows(path, ll, ['btle.control_opcode', 'btle.control.error_code']):
        events['ll-terminate' if opcode == 0x02 else 'll-reject'].append((frame, error))
    events['iso-packet'] = [(frame,) for frame, _ in field_rows(path, 'bthci_iso', ['bthci_iso.chandle'])]
    return events


def error_code(entry):
    # Codes past the last one the Core spec defines (0x45) are ciphertext of an encrypted link the sniffer
    # could not decrypt, not an event: marked with '?'.
    if entry[1] is None:
        return 'no code'
    return f'0x{entry[1]:02X}' + ('?' if entry[1] > 0x45 else '')


def counted(entries, key=lambda e: f'0x{e[1]:02X}'):
    counts = collections.Counter(key(e) for e in entries)
    return ' '.join(f'{k}×{n}' for k, n in sorted(counts.items())) or '0'


def row(name, events):
    conn = counted(events['connection-error'], key=lambda e: f'{e[2]} 0x{e[1]:02X}')
    other = [f'{label} {counted(events[kind], key=error_code)}' for kind, label in (
        ('ll-terminate', 'LL_TERMINATE'), ('ll-reject', 'LL_REJECT'), ('update-error', 'update-complete'),
        ('l2cap-update-rejected', 'L2CAP update rejected'), ('disconnection-failed', 'disconnect failed'))
        if events[kind]]
    if events['iso-packet'] or events['iso-event']:
        other.append(f"ISO {len(events['iso-packet'])} packets, {len(events['iso-event'])} events")
    cells = [f'`{name}`', conn, counted(events['disconnection']), counted(events['smp-failed']),
             counted(events['encryption-error']), counted(events['att-error']),
             counted(events['bqr'], key=lambda e: f'id 0x{e[1]:02X}') if events['bqr'] else '0',
             counted(events['hardware-error']), '; '.join(other) or '-']
    return '| ' + ' | '.join(cells) + ' |'


def main(args):
    with_frames = '--frames' in args
    for path in (a for a in args if a != '--frames'):
        events = scan(path)
        if with_frames:
            print(path)
            for kind, entries in sorted(events.items()):
                if entries:
                    print(f'  {kind}: ' + ', '.join(' '.join(f'0x{v:02X}' if isinstance(v, int) and i else str(v)
                                                             for i, v in enumerate(e)) for e in entries))
        else:
            print(row(path.rsplit('/', 1)[-1], events))


if __name__ == '__main__':
    main(sys.argv[1:])
