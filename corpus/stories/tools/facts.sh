#!/bin/sh
# facts.sh FILE : tshark facts for corpus-new.md
F=$1
T() { nice -n 19 tshark -r "$F" -o 'uat:user_dlts:"User 0 (DLT=147)","btle","0","","0",""' "$@"; }
V='!(nordic_ble.crcok == 0) && !btle.crc.incorrect'
cnt() { sort | uniq -c | sort -k2 | awk '{printf "%s:%s ", $2, $1}'; echo; }
echo "events (code:count): $(T -Y bthci_evt -T fields -e bthci_evt.code 2>/dev/null | cnt)"
echo "status by event (code/sub status:count): $(T -Y 'bthci_evt.status && !(bthci_evt.code==0x0e) && !(bthci_evt.code==0x13)' -T fields -E occurrence=f -e bthci_evt.code -e bthci_evt.le_meta_subevent -e bthci_evt.status 2>/dev/null | awk -F'\t' '{print $1 ($2!=""?"/"$2:"") "=" $3}' | cnt)"
echo "command complete non-zero status (opcode=status:count): $(T -Y 'bthci_evt.code==0x0e && bthci_evt.status!=0' -T fields -E occurrence=f -e bthci_evt.opcode -e bthci_evt.status 2>/dev/null | awk -F'\t' '{print $1 "=" $2}' | cnt)"
echo "disconnection reasons: $(T -Y 'bthci_evt.code==0x05' -T fields -e bthci_evt.reason 2>/dev/null | cnt)"
echo "SMP opcodes: $(T -Y "btsmp && $V" -T fields -e btsmp.opcode 2>/dev/null | cnt)"
echo "SMP pairing failed reasons: $(T -Y "btsmp.opcode==0x05 && $V" -T fields -e btsmp.reason 2>/dev/null | cnt)"
echo "LL control opcodes (CRC ok): $(T -Y "btle.control_opcode && $V" -T fields -e btle.control_opcode 2>/dev/null | cnt)"
echo "LL_TERMINATE_IND reasons: $(T -Y "btle.control_opcode==0x02 && $V" -T fields -e btle.control.error_code 2>/dev/null | cnt)"
echo "LL_LENGTH max_rx/tx octets: $(T -Y "(btle.control_opcode==0x14 || btle.control_opcode==0x15) && $V" -T fields -e btle.control_opcode -e btle.control.max_rx_octets -e btle.control.max_tx_octets 2>/dev/null | tr '\t' '/' | cnt)"
echo "ATT: $(T -Y "btatt && $V" -T fields -e frame.number 2>/dev/null | wc -l); ATT errors (req/code): $(T -Y "btatt.opcode==0x01 && $V" -T fields -e btatt.req_opcode_in_error -e btatt.error_code 2>/dev/null | tr '\t' '/' | cnt)"
echo "CONNECT_IND: $(T -Y "btle.advertising_header.pdu_type==0x05 && $V" -T fields -e frame.number 2>/dev/null | wc -l); LL encrypted-flag pkts: $(T -Y 'nordic_ble.encrypted==1' -T fields -e frame.number 2>/dev/null | wc -l); MIC bad: $(T -Y 'nordic_ble.micok==0' -T fields -e frame.number 2>/dev/null | wc -l)"
echo "BR/EDR: conn-complete(0x03) status: $(T -Y 'bthci_evt.code==0x03' -T fields -e bthci_evt.status 2>/dev/null | cnt) auth-complete(0x06): $(T -Y 'bthci_evt.code==0x06' -T fields -e bthci_evt.status 2>/dev/null | cnt) simple-pairing-complete(0x36): $(T -Y 'bthci_evt.code==0x36' -T fields -e bthci_evt.status 2>/dev/null | cnt) link-key-req(0x17): $(T -Y 'bthci_evt.code==0x17' -T fields -e frame.number 2>/dev/null | wc -l) link-key-neg-reply(0x040c): $(T -Y 'bthci_cmd.opcode==0x040c' -T fields -e frame.number 2>/dev/null | wc -l)"
