#!/bin/sh
# Extract the public corpus listed in corpus/README.md from already-fetched repository snapshots
# and check every file's sha256. It downloads nothing: fetch each repository first (search tool:
# `fetch github:OWNER/NAME`), which leaves a bare git directory under MIRRORS/OWNER+NAME/repo.
#
# usage: corpus/fetch.sh MIRRORS [TARGET]   (MIRRORS: the folder holding the OWNER+NAME snapshots; TARGET default ./corpus-files)
# exit:  0 every file extracted and verified; 1 some file missing or with a wrong sha256; 2 bad usage
set -u
[ $# -ge 1 ] || { echo "usage: corpus/fetch.sh MIRRORS [TARGET]" >&2; exit 2; }
MIRRORS=$1
TARGET=${2:-./corpus-files}
[ -d "$MIRRORS" ] || { echo "fetch.sh: no mirror folder $MIRRORS" >&2; exit 2; }
mkdir -p "$TARGET" || exit 2
ok=0; bad=0; missing=0
# repo commit sha256 name path   (one file per line; the list ends at END_OF_LIST)
while read -r repo commit sha name path; do
  [ -z "$repo" ] && continue
  case "$repo" in \#*) continue ;; esac
  dir="$MIRRORS/$(printf '%s' "$repo" | tr / +)/repo"
  [ -d "$dir/.git" ] && dir="$dir/.git"
  if ! git --git-dir="$dir" cat-file -e "$commit:$path" 2>/dev/null; then
    echo "MISSING  $name  ($repo $commit:$path not in $dir)"; missing=$((missing+1)); continue
  fi
  git --git-dir="$dir" show "$commit:$path" > "$TARGET/$name.part" && mv "$TARGET/$name.part" "$TARGET/$name"
  got=$(sha256sum "$TARGET/$name" | cut -d' ' -f1)
  if [ "$got" = "$sha" ]; then ok=$((ok+1)); echo "ok       $name"
  else bad=$((bad+1)); echo "SHA256   $name  expected $sha got $got (LFS pointer or changed snapshot?)"; fi
done <<'END_OF_LIST'
mikeryan/crackle d83b4b6f4145ca53c46c36bbd7ccad751af76b75 07e38b36cfd923ad411edeee90ff0de648c5341b284bbaa9b73038ece857127f ppi-btle-lt192_crackle-legacy-pairing-ltk-exchange-encrypted.pcap tests/01_crack/pairing_and_ltk_exchange.pcap
mikeryan/crackle d83b4b6f4145ca53c46c36bbd7ccad751af76b75 c98a36ce02502d3488961f2372e02acfd8c52014bfd4a6f40bd329ded84ddf88 ppi-btle-lt192_crackle-legacy-pairing-decrypted-by-crackle.pcap tests/01_crack/out/expected_output.pcap
mikeryan/crackle d83b4b6f4145ca53c46c36bbd7ccad751af76b75 33055af7d01b02785dc057deade884c3a788e95f173422f1affa761426a93bc3 ppi-btle-lt192_crackle-known-ltk-encrypted.pcap tests/02_ltk_decrypt/known_ltk.pcap
mikeryan/crackle d83b4b6f4145ca53c46c36bbd7ccad751af76b75 94f216782a3bbfd03831eca1c2a60cd008642bdbece2efa4688c37fff44c291a ppi-btle-lt192_crackle-numeric-pin-pairing.pcap tests/05_numeric_pin/numeric_pin.pcap
mikeryan/crackle d83b4b6f4145ca53c46c36bbd7ccad751af76b75 cc315c7ba380c4f2c90d7195b0b529f3fdbc96f375d98372825ed1ac539957f3 ppi-btle-lt192_crackle-numeric-pin-decrypted-by-crackle.pcap tests/05_numeric_pin/out/expected_output.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 0dd47677698bb85b16ccfc8ba591637b1f1546a9544f83cd66f86fb7e1a1e9b6 lell-rf-lt256_bsniffhub-aux-connect-req-ext-adv-enc-ltk.pcap examples/AUX_CONNECT_REQ-ltk-9A7163D4C92D91B5C3BA0EBFB4D1B8A2.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 7090b7b0e9dadd4dd083762670adbb69a49e710aa0f511188f3fbb28053d805f lell-rf-lt256_bsniffhub-lesc-justworks-42k-enc-ltk.pcapng examples/sc-justworks-ltk-064188355D35D1B9C29F31B5F3FD9480.pcapng
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 b849c5165c254ad4aa38fafe537dc87f8869363d2b2cff7951670e5972ed81f7 lell-rf-lt256_bsniffhub-lesc-justworks-ll-fragments-enc-ltk.pcap examples/sc-justworks-fragments-assembly-ltk-BD27012E93C195F13B8F176FE84A2DED.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 e14ab415585f4ee530f5e779e993f8379a89ab5e445e2db83fe0e42846424c22 lell-rf-lt256_bsniffhub-legacy-passkey-123456-enc.pcap examples/lp-passkeyentry-123456-initiator-inputs-responder-displays.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 6ed71527d39ad44d2a6d7ac7b637a5b438a5ef1e5d391678fa8d6162d8fe75ba lell-rf-lt256_bsniffhub-lesc-passkey-123456-enc.pcap examples/sc-passkeyentry-123456-initiator-inputs-responder-displays.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 62271a9e6f167d7ec3c7ec8c603685e3b3be744d9f458949ed87dd972148285e lell-rf-lt256_bsniffhub-connection-update-plain-att.pcap examples/connection-update.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 91edb5478c40bd317c520098a74c18ed1e868439456c6c305772a0620536f70f lell-rf-lt256_bsniffhub-phy-changed.pcap examples/phy-changed.pcap
homewsn/bsniffhub 29049d7d2108389b3d89cbe6e44cb94b0b5c9a64 fad7eed37d02f2a924bc3a6224d9f4dbef45f1dc59d28f78eada1e69bed2859f lell-rf-lt256_bsniffhub-reconnect-enc-known-ltk.pcap examples/ltk-063F1154BC631D186D48A05B7F5DCD8F.pcap
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 b5bc753b0a407e769a8783d584f17f7a6be7fa5f6981248cb8043c617d5cddee nrfsniffer-lt272-pcapng_sweyntooth-telink-invalid-ctrl-pdu-sniffer-decrypted.pcapng captures/noncomplicance_telink_respond_invalid_control_pdu2_sniffer.pcapng
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 3b8e159a47129cf3c7b9d8a161537c2e270fc788357ffd8601ace0d698e065ac nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-cypress-psoc6-llid-crash-pairing-loop.pcapng captures/capture_cypress_psoc6_crash_llid.pcapng
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 4622b6f25d5d5f16ab3b0044d1a8675af0cc814a3591b02056a4d9e2b0ee0e38 nrfsniffer-lt272_sweyntooth-nxp-ll-length-crash.pcap captures/capture_nxp_ll_length_crash_capture.pcap
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 c93cc019c2f6ecf1527b7bb804db334ca631a88613996e9038f7a5cdbc0fc554 nrfsniffer-lt272_sweyntooth-nxp-llid-deadlock.pcap captures/capture_nxp_llid_deadlock_attack_capture.pcap
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 764152668f573548edca96b0622de39bf2d5a4d91cdab0f073be00f4b82187d6 nrfsniffer-lt272_sweyntooth-zephyr-invalid-sequence.pcap captures/capture_zephyr_invalid_sequence.pcap
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 e14819840d0a01e0dbd9f1bfcc0703d58c2ae69f324028fa1b58bf735c653bae nrfsniffer-lt272_sweyntooth-telink-zero-ltk-installation.pcap captures/capture_telink_zero_ltk_installation.pcap
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 4f689d8d96bf4f1efe29519a1ace6322b43b5a9795f42e1eb6a30c828adb35d5 nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-telink-invalid-ctrl-pdu-enc-loop.pcapng captures/noncomplicance_telink_respond_invalid_control_pdu.pcapng
Matheus-Garbelini/sweyntooth_bluetooth_low_energy_attacks 40c985b9a9ff1189ddf278462440b120cf96b196 6ce61cd81c3b53da2f4a1e41c3766bd71b0afdbc00b6737a9a95d10fe678ba03 nrfsniffer-lt272-pcap-named-pcapng_sweyntooth-nxp-unexpected-encryption-start.pcapng captures/anomaly_nxp_unexpected_encryption_start.pcapng
whad-team/whad-client 15365c13516319f55faae62390691088cdfb1592 f7ae2fb0eba55b5e59e040dd22d3bf5f61034a0f26b00fa1d4fe9ffeb3d3614f lell-rf-lt256_whad-ble-pairing-gatt.pcap whad/resources/pcaps/ble_pairing.pcap
soaresden/IX7TrackerPro 6d494e5f1fcdd353dbbc5c924a32ce10f32af80f 89c69468e3d56f83fbdfedd614fa1720720e9145650df07f58c13fe40a75032a android-btsnoop_ix7-tracker-att-over-bredr-psm1f-rfcomm.log btsnoop_hci.log
phlash/blefun eb7c9733223b2d9229201c70bb132d02bc178ce2 68830737646b43fa4d27a727330a327fe4095dde00f868544d13f1c7cc03cfcd android-btsnoop_blefun-18k-att-notify-stream.log btsnoop_hci.log
scientistnobee/DSD6 01932d57ed2b6d11d0ed0f64ca67c46611c11b6c fb6110791862b263723775edc958d755c219e0ae5bf9fa8651da33309f62461f android-btsnoop_dsd6-fitness-tracker-smp.log btsnoop_hci.log
pfalcon/Chsmartbulb-led-bulb-speaker a93ce50c0e6eb198fcd7702a167482eb1f19c609 3166e04cddcf7849d29479741ff5b38b3725aff89e522b2e304f0bdaf1698407 android-btsnoop_chsmartbulb-dualmode-classic-sdp-rfcomm-avdtp.log btsnoop_hci.log
2m/a2dp-captures 95450338805ad0ed21090bec1344cb3689554b37 1d7e0cfd5aedb676903eb950f9bac58e5b93614f180f83bd7465002beb2145bd android-btsnoop-named-cap_lg750-a2dp-classic-no-att.cap mt4gs_cm10.1-lghbs750/btsnoop_hci_lg750.cap
bbmp/AndroidPad 8de471001309c2468bb3480d2e5ff83345d6c91f 0db46a4ac108c557442761fab6fc119625c5dd36c52b15660d42d4a22ee370d2 android-btsnoop-cfa_robam-appliance-ota-fff0-writecmd.cfa btsnoop_hci.cfa
FrankHJCuypers/fuut 18acc472ab7b249ee02be4e88021f8d86e056994 5f741bb752fdf2652117372a486fb73c5369cce5bb5ada184a45e255378abae0 android-btsnoop-cfa_fuut-nexxtender-bonded-vendor-acl-0edc.cfa logs/hci_snoop20250125165300.cfa
FrankHJCuypers/fuut 18acc472ab7b249ee02be4e88021f8d86e056994 1ba543d50b9d7103b9d9bcce36a5d5eedb1d0fe0654c32272a7d230b382091c9 android-btsnoop_fuut-nexxtender-broadcom-vendor-smp.log logs/btsnoop_hci20241230_1.log
havvk/even-g2-smart-classroom feb999e4b900d59578ce6dad8af5894d7ca29dcd 7ce06bc54fc34d886e67c273e90f8fd3c14a60d324e245b97105b40f85e49089 pklg-ios-le_even-g2-glasses-gesture-notify-bt3.pklg tests/bt3.pklg
Swastik36/OPPO-Earbuds a8256619994450e9c1d068114de06835f472660d 77e2781ecada28b9b3b2175b1c9c0934731f1d95f3c3da0f00c7c4f70a610f71 android-btsnoop-cfa_oppo-enco-bqr-58-monitoring-111441.cfa captures/BT_HCI_2026_0719_111441.cfa
nick0451/dsp408-tuner 17e62bb7c0b59ac98f34e1e85324e7bfbbb67d1d 8f17ab7851921b3f2d51b4cead6664eb02b14c03cb74e9cd223c8e2853a5f851 android-btsnoop_dsp408-broadcom-vendor-ff-spp-rfcomm.log captures/btsnoop_hci.log
durnerj/PoGo-Plus-BLE 2e7ab7c78d3ea44a438a5cffcc01636dac99e565 fd5c8b4dc7ab106a8f0263a39ffdb4474641ef83413a3bddee6db53b681037a4 android-btsnoop_pogo-plus-le-pairing-encrypted.log logs/bt_log_plus_pair_2017_12_13.log
durnerj/PoGo-Plus-BLE 2e7ab7c78d3ea44a438a5cffcc01636dac99e565 c01ebb3433b7b95e369b6b39a553d4a3e7dbc2eb07a17772d3927492b600bd21 android-btsnoop_pogo-plus-pair-and-reconnect-encrypted.log logs/bt_log_plus_pair_and_reconnect_2017_12_13.log
madkaye/revcar-cli c49a0ae47b1545c81d53d4fb5ddccbc73203caa2 cfa9cba55944e96ae49f6e4dbe24f97137664df09b16543b2fcf8554f9b96d8c android-btsnoop-acl-only_revcar-no-hci-events-att.log btsnoop_hci.log
wangdalian/btsnooper ac60b96b53d9f952e43fdd8c577f70f5b6dafa7e 33001fe3f13ae6ea74d1e7c2c115bb326bd52a8feaf68ab60c8f312cf2941598 android-btsnoop_btsnooper-sample-4.7k-att.log data/btsnoop_hci.log
syssi/esphome-lumentree 36551d5528f248f2facdd5cf7b3b7ace61a0e33e 56d28b84a6212d14cefb6578de3211c9f38c543a6d2bff342a29d3108e905e8d android-btsnoop-acl-only_lumentree-inverter-att-notify.log docs/btsnoop_hci.log
cheoljun99/bluetooth-pcap-test 540b570b062c1a1ed6fe1d1bd3127ecbdd102957 a87153e97ccb011193cfebe472d2d18ec41ddbf2f2219d45e4a2e5777f83538b pcap-ns-lt201-h4phdr_infocar-le-att-linux.pcap bluetooth-infocar.pcap
cheoljun99/bluetooth-pcap-test 540b570b062c1a1ed6fe1d1bd3127ecbdd102957 6d64c77c1f251888481472149bae6b538addedb68e945f6f8efa3b935137dcf1 pcap-ns-lt201-h4phdr_linux-inquiry-sdp-vendor-ff.pcap bluetooth.pcap
AshMartian/HappyLeaf 09264bb233c6ed4a7a83654a41acdf7c27e6e81e 62411cf82361f3874aa16412f9d9f417f17e77068f4416c9e3f508ec4b7b584e android-btsnoop_happyleaf-elm327-classic-rfcomm-spp.log btsnoop_hci.log
NoahB10/MABIP e7c269415e7686de90f0702127585c49ad200ac4 85ea99c15451fe043e991fb838afe70a29233b277c1975660f83e49421197d63 android-btsnoop_mabip-amuza-classic-rfcomm-6h.log Amuza_t1_btsnoop_hci.log
NoahB10/MABIP e7c269415e7686de90f0702127585c49ad200ac4 1d3dd84c1dc3af6d630e7de49f66c657a654d344f10f8352e03cb0b1ecbbe306 android-btsnoop_mabip-classic-rfcomm.log btsnoop_hci.log
choonkiatlee/wban-python 3c644a32702f2a37e7a9c10f49bc5ebfcbf0a688 a97fa7eec1ba56d0eb329903161202a668fdc887dd9ec4ce9f0212a3ef0c42d2 android-btsnoop_wban-le-att-notify.log btsnoop_hci.log
jpvargasdev/MachineSpiritTimetable 5918f942f918da20f9f83d37b6e98a7d53256296 3173e2338bdc4b8b76ffa693ec1d2073ce5ee73a28de946aa64f03aad5846f55 android-btsnoop-qcom-0edc_msp-aaaa-le-att-smp.log btsnoop_aaaa.log
jpvargasdev/MachineSpiritTimetable 5918f942f918da20f9f83d37b6e98a7d53256296 cf7523922410356b2e2aaeb3bdc34a4552e6e6c476489817aef9187b96342018 android-btsnoop_msp-abcdefg-le-att.log btsnoop_abcdefg.log
jpvargasdev/MachineSpiritTimetable 5918f942f918da20f9f83d37b6e98a7d53256296 01842fb59dc4651b907e9740084e06b049974112b98a486d0a73ebe6f071ed8e android-btsnoop-qcom-0edc_msp-bbbb-le-att-smp.log btsnoop_bbbb_blue.log
jpvargasdev/MachineSpiritTimetable 5918f942f918da20f9f83d37b6e98a7d53256296 6702161bd0618415416aae97ebd01e4728fe715bb71b45314fcff3ea897b749d android-btsnoop-qcom-0edc_msp-bbcc-le-att.log btsnoop_bbcc.log
jpvargasdev/MachineSpiritTimetable 5918f942f918da20f9f83d37b6e98a7d53256296 7b47311b06668dd057f5c019b182ab16dcd5a02b5e8eaf12ca2ca457d78a9f38 android-btsnoop_msp-hci-commands-only.log btsnoop_hci.log
Syed-Bipul-Rahman/bluethooth_light_controll 8c10f5a9a3c262ce8e7eb930cc5d9ee74170063f 8be3edd199d11076f4903bcfdcc5951834771f6f08edd93e42cd2cb5a4f489bc android-btsnoop_lightctl-2h-le-att-empty-appearance.log btsnoop_hci.log
aleksamarkoni/bluetooth_sample 4864ffa3ae6a6e363d5339eb7875ffd4fad6f8f1 a3e087c1aa6ccd6d898b05960c8db5548f53c0d4fa416e2af844d2d94734a36e android-btsnoop-broadcom-vsc_aleksa-classic-hfp-avdtp.log btsnoop_hci.log
manojshakti77/bluetooth 73becd3e66ec20a194cab64de2d8982b80af4772 d5545b058e762e676a4a9f36f75495f1de605c1c6bfdd742043ea752a4834e0c android-btsnoop-broadcom-vsc_manoj-classic-avdtp.log btsnoop_hci.log
mtoslalibu/ec521 aafe98d5df91e72df170489688b67e427a08f1f3 3e4c07d246acf3a051ef9ac5df260b9ca33cae08ceeadc076f9c3490f7d3c437 android-btsnoop_ec521-le-smp-att-inferred-conn.log docs/bt-logs/btsnoop_hci.log
tonton81/test 74774278a54c1627e90eef00e12c7e72244cd9ef 48933902c6f95d81a688f794c7f6ac2f87891fae3d97aba3f4b9ffe3da8380dc android-btsnoop_tonton-le-att.log btsnoop_hci.log
jonohayon/mi-watch-lite-rtl ef3431b5c0b4376db7de4c952374318a41e62e65 4d66f116bd32f55dbb556c2e7ddd3a9f0a6c54fe5808772e77d7823ef24b29d0 android-btsnooz-cut_mi-watch-lite-qcom-ble-acl-10b.btsnoop out.btsnoop
jonohayon/mi-watch-lite-rtl ef3431b5c0b4376db7de4c952374318a41e62e65 8468192098b32ce362d7fb9ccbe2bac71966376337e6280dd4a1998a958722aa android-btsnooz_mi-watch-lite-qcom-hci-only-1h42.btsnoop research/bluetooth/out.btsnoop
END_OF_LIST
echo "$ok verified, $bad wrong sha256, $missing missing -> $TARGET"
[ "$bad" -eq 0 ] && [ "$missing" -eq 0 ]
