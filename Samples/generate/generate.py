#!/usr/bin/env python3
"""Generate blescope's sample captures with a real Bluetooth host stack (bumble).

Usage: python3 Samples/generate/generate.py [--out DIR] [scenario ...]

For every scenario this writes ``<name>.btsnoop`` (btsnoop v1, datalink 1002 =
HCI H4, recorded at the phone's HCI) and ``<name>.truth.json`` (what the
generator sent, plus counts computed from the written btsnoop by
``common.read_btsnoop``, which does not use bumble).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import a2dpstream  # noqa: E402
import bracelet  # noqa: E402
import coc  # noqa: E402
import buttonless  # noqa: E402
import common  # noqa: E402
import cypress  # noqa: E402
import dfu  # noqa: E402
import diagatt  # noqa: E402
import diagbond  # noqa: E402
import diagcccd  # noqa: E402
import diagconnect  # noqa: E402
import diagencrypt  # noqa: E402
import diagmtu  # noqa: E402
import diagpairing  # noqa: E402
import diagparams  # noqa: E402
import diagstale  # noqa: E402
import diagsupervision  # noqa: E402
import diagssp  # noqa: E402
import secbredr  # noqa: E402
import secle  # noqa: E402
import diagterminate  # noqa: E402
import diagunanswered  # noqa: E402
import diffcentral  # noqa: E402
import difffw  # noqa: E402
import eatt  # noqa: E402
import eom  # noqa: E402
import espota  # noqa: E402
import headset  # noqa: E402
import hfpcall  # noqa: E402
import legacydfu  # noqa: E402
import mcumgr  # noqa: E402
import mcumgrconfirm  # noqa: E402
import silabs  # noqa: E402
import sim  # noqa: E402
import suota  # noqa: E402
import telink  # noqa: E402
import tioad  # noqa: E402
import unicast  # noqa: E402
import broadcast  # noqa: E402
import vendorota  # noqa: E402

SCENARIOS = {
    "eom-transfer": eom,
    "bracelet": bracelet,
    "nordic-dfu": dfu,
    "headset-ota": headset,
    "legacy-dfu": legacydfu,
    "mcumgr-upload": mcumgr,
    "silabs-ota": silabs,
    "vendor-ota": vendorota,
    "buttonless-dfu": buttonless,
    "ti-oad": tioad,
    "dialog-suota": suota,
    "esp-ble-ota": espota,
    "telink-ota": telink,
    "mcumgr-confirm": mcumgrconfirm,
    "cypress-bootloader": cypress,
    "eatt": eatt,
    "coc-stream": coc,
    # Diagnosis Samples: failures no real capture of ours shows (diagnosis rules of ../shared/diagnosis-rules.md).
    "diag-connect-timeout": diagconnect,
    "diag-bond-lost": diagbond,
    "diag-pairing-failed": diagpairing,
    "diag-insufficient-encryption": diagencrypt,
    "diag-cccd-never-written": diagcccd,
    "diag-att-timeout": diagatt,
    "diag-stale-handle": diagstale,
    "diag-param-rejected": diagparams,
    "diag-mtu-23": diagmtu,
    "diag-supervision-timeout": diagsupervision,
    "diag-unacked-terminate": diagterminate,
    "diag-unanswered-before-timeout": diagunanswered,
    "diag-ssp-missing-key": diagssp,
    # The security Samples (issue 45): how a link was secured and what is weak.
    "sec-legacy-short-key": secle.LegacyShortKey,
    "sec-sc-debug-key": secle.DebugKey,
    "sec-bredr-key-downgrade": secbredr,
    # BR/EDR audio (issue 46): A2DP streaming, a hands-free call with eSCO, an eSCO setup that fails.
    "a2dp-stream": a2dpstream,
    "hfp-call": hfpcall.CALL,
    "hfp-esco-fails": hfpcall.ESCO_FAILS,
    "le-audio-unicast": unicast,
    "le-audio-broadcast": broadcast,
    # The diff Samples: pairs for `blescope diff` (the second of each pair has a `diff` block against the first).
    "diff-fw1": difffw.FW1,
    "diff-fw2": difffw.FW2,
    "diff-central-a": diffcentral.CENTRAL_A,
    "diff-central-b": diffcentral.CENTRAL_B,
}

# Each sample starts at a different (fixed) wall-clock time.
START_OFFSETS = {"eom-transfer": 0.0, "bracelet": 3600.0, "nordic-dfu": 7200.0, "headset-ota": 10800.0,
                 "legacy-dfu": 14400.0, "mcumgr-upload": 18000.0, "silabs-ota": 21600.0,
                 "vendor-ota": 25200.0, "buttonless-dfu": 28800.0,
                 "ti-oad": 32400.0, "dialog-suota": 36000.0, "esp-ble-ota": 39600.0, "telink-ota": 43200.0, "mcumgr-confirm": 46800.0, "cypress-bootloader": 50400.0,
                 # eatt and coc-stream were generated with these offsets on a parallel branch; they share a start time with
                 # esp-ble-ota and telink-ota (harmless: different files), and keep it so that they regenerate byte-identically.
                 "eatt": 39600.0, "coc-stream": 43200.0,
                 # The diagnosis Samples go on from cypress-bootloader, one hour apart.
                 "diag-connect-timeout": 54000.0, "diag-bond-lost": 57600.0, "diag-pairing-failed": 61200.0,
                 "diag-insufficient-encryption": 64800.0, "diag-cccd-never-written": 68400.0,
                 "diag-att-timeout": 72000.0, "diag-stale-handle": 75600.0, "diag-param-rejected": 79200.0,
                 "diag-mtu-23": 82800.0, "diag-supervision-timeout": 86400.0,
                 # The LE Audio Samples after the diagnosis ones.
                 "le-audio-unicast": 90000.0, "le-audio-broadcast": 93600.0,
                 # The diff Samples after the LE Audio ones.
                 "diff-fw1": 97200.0, "diff-fw2": 100800.0, "diff-central-a": 104400.0, "diff-central-b": 108000.0,
                 # The diagnosis Samples of issue 35, made beside the diff ones (the same hours; each file keeps its own).
                 "diag-unacked-terminate": 97200.0, "diag-unanswered-before-timeout": 100800.0,
                 "diag-ssp-missing-key": 104400.0,
                 # The security Samples of issue 45, after the diff ones.
                 "sec-legacy-short-key": 111600.0, "sec-sc-debug-key": 115200.0, "sec-bredr-key-downgrade": 118800.0,
                 # The BR/EDR audio Samples of issue 46, made beside the security ones (the same hours; each file keeps its own).
                 "a2dp-stream": 111600.0, "hfp-call": 115200.0, "hfp-esco-fails": 118800.0}


def generate(name: str, out_dir: str) -> dict:
    module = SCENARIOS[name]
    random.seed(0x5A17)  # bumble draws a few random numbers; keep them fixed
    buf = io.BytesIO()

    sim.START_OFFSET = START_OFFSETS[name]
    truth = sim.run(lambda loop: module.run(loop, buf))
    data = buf.getvalue()
    stats, att = common.read_btsnoop(data)
    if hasattr(module, "locate"):
        module.locate(truth, att, common.Locator(att))
    if hasattr(module, "locate_capture"):
        module.locate_capture(truth, data)
    truth = {
        "sample": f"{name}.btsnoop",
        "format": "btsnoop v1, datalink 1002 (HCI UART/H4), recorded at the phone (central) host",
        "generator": "Samples/generate/generate.py with bumble (https://github.com/google/bumble) 0.0.236",
        "phone_public_address": sim.PHONE_ADDRESS,
        "phone_random_address": sim.PHONE_RANDOM,
        "device_address": module.DEVICE_ADDRESS,
        **truth,
        "capture": stats,
    }
    if hasattr(module, "amend_capture"):
        module.amend_capture(truth["capture"], data)
    # The second Sample of a diff pair lists every expected difference against the first (written before it).
    if hasattr(module, "DIFF_AGAINST"):
        first = os.path.join(out_dir, f"{module.DIFF_AGAINST}.truth.json")
        if not os.path.exists(first):
            raise SystemExit(f"{name}: generate {module.DIFF_AGAINST} first (its truth file is compared)")
        with open(first) as f:
            truth["diff"] = module.compare(truth, json.load(f), module.DIFF_AGAINST)
    # A scenario recorded at both ends (EXTRA_SAMPLES) leaves each further capture in `module.extra_outputs`.
    for extra in getattr(module, "EXTRA_SAMPLES", []):
        extra_data = module.extra_outputs.pop(extra).getvalue()
        extra_stats, _ = common.read_btsnoop(extra_data)
        extra_truth = {
            "sample": f"{extra}.btsnoop",
            "format": "btsnoop v1, datalink 1002 (HCI UART/H4), recorded at the device (peripheral) host",
            "generator": truth["generator"],
            "device_address": module.DEVICE_ADDRESS,
            "phone_random_address": sim.PHONE_RANDOM,
            "recorded_with": f"{name}.btsnoop",
            **module.extra_truth(extra, truth, extra_data),
            "capture": extra_stats,
        }
        with open(os.path.join(out_dir, f"{extra}.btsnoop"), "wb") as f:
            f.write(extra_data)
        with open(os.path.join(out_dir, f"{extra}.truth.json"), "w") as f:
            json.dump(extra_truth, f, indent=1)
            f.write("\n")
    with open(os.path.join(out_dir, f"{name}.btsnoop"), "wb") as f:
        f.write(data)
    with open(os.path.join(out_dir, f"{name}.truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    return truth


BUMBLE_VERSION = "0.0.236"  # the samples in the repository were made with this version


def main() -> int:
    try:
        from importlib.metadata import version

        if version("bumble") != BUMBLE_VERSION:
            print(f"warning: bumble {version('bumble')} installed; samples were made with {BUMBLE_VERSION}"
                  " (pip install bumble==" + BUMBLE_VERSION + ")", file=sys.stderr)
    except Exception:  # noqa: BLE001 - metadata is only a courtesy check
        pass
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default=os.path.dirname(HERE), help="output directory (default: Samples/)")
    ap.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    args = ap.parse_args()
    for name in args.scenarios:
        t0 = time.monotonic()
        truth = generate(name, args.out)
        cap = truth["capture"]
        print(
            f"{name}: {cap['frames']} frames, {cap['att_pdus']} ATT PDUs, "
            f"{cap['duration_us'] / 1e6:.2f} s of capture, "
            f"{os.path.getsize(os.path.join(args.out, name + '.btsnoop'))} bytes, "
            f"generated in {time.monotonic() - t0:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
