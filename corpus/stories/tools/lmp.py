#!/usr/bin/env python3
"""lmp.py FILE: list the LMP PDUs of an InternalBlue 'monitor lmp' trace (Ethernet frames, EtherType 0xFFF0),
decoded from tshark's own data.data bytes: byte 0 = direction (0 sent by this side's controller, 1 received),
bytes 9.. = InternalBlue's LMP record: a header byte (length<<3 | 7), then the LMP PDU (opcode<<1 | TID)."""
import subprocess, sys
N = {1:'name_req',2:'name_res',3:'accepted',4:'not_accepted',5:'clkoffset_req',6:'clkoffset_res',7:'detach',8:'in_rand',
9:'comb_key',10:'unit_key',11:'au_rand',12:'sres',13:'temp_rand',14:'temp_key',15:'encryption_mode_req',
16:'encryption_key_size_req',17:'start_encryption_req',18:'stop_encryption_req',19:'switch_req',33:'max_power',34:'min_power',
35:'auto_rate',36:'preferred_rate',37:'version_req',38:'version_res',39:'features_req',40:'features_res',45:'max_slot',
46:'max_slot_req',47:'timing_accuracy_req',48:'timing_accuracy_res',49:'setup_complete',51:'host_connection_req',
52:'slot_offset',55:'supervision_timeout',60:'set_AFH',61:'encapsulated_header',62:'encapsulated_payload',
63:'simple_pairing_confirm',64:'simple_pairing_number',65:'DHkey_check'}
X = {1:'accepted_ext',2:'not_accepted_ext',3:'features_req_ext',4:'features_res_ext',11:'packet_type_table_req',
16:'channel_classification_req',17:'channel_classification',25:'io_capability_req',26:'io_capability_res',
31:'power_control_req',32:'power_control_res'}
out = subprocess.run(['tshark','-r',sys.argv[1],'-T','fields','-e','frame.number','-e','frame.time_relative','-e','eth.src','-e','data.data'],capture_output=True,text=True).stdout
for l in out.splitlines():
    n,t,src,d = l.split('\t'); b = bytes.fromhex(d)
    p = b[9:]; ln = p[0] >> 3; op = p[1] >> 1; tid = p[1] & 1
    if op == 127: name, par = 'LMP_' + X.get(p[2], 'ext%d' % p[2]), p[3:1 + ln]
    else: name, par = 'LMP_' + N.get(op, 'op%d' % op), p[2:1 + ln]
    print(n, t[:9], src, 'rx' if b[0] else 'tx', 'tid%d' % tid, name, par.hex())
