"""Generated tables and their scores are pinned byte for byte: speed work must not move them.

The digests were taken from the per-cell generator and grader before they were batched
(`python scripts/dataclean_golden.py`, which also covers 20,000- and 100,000-row tables with
--big). A deliberate change of generation is a new generator version: re-pin from that script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import dataclean_golden as golden

PINNED = {
    "eval[0] crm rows=None": (
        "e8a2751d3bd24b01f71358efa31d15e7960a942c0930da18aa443b286698e29a",
        "1e02fbb903014bfa6d1315cddbaeba305ac9268291b7121dd4fa32327afe3864",
    ),
    "eval[0] crm rows=1": (
        "c9aa5751c853004ffe3ccd7080c86d08a526718622791d7024ba24f5a4b764bd",
        "46f8e951390e43cd0fdc0c8e57db5d3a285cf9a5511b8d5b0a5d0d664f5f12bb",
    ),
    "eval[0] crm rows=2": (
        "79831728c78a6e87bd5cde0ee932af260a81fa54b04d79f77e237872c03b8c84",
        "05d41a07e416ebd72b1bb220174c56879f11b23c927ca4db9705fcce4d595c96",
    ),
    "eval[0] crm rows=3": (
        "0ac6cfbe9b7d2edd93fac996273b5c2c2b273a767f294ee13a0f5483460aa12c",
        "c5c2ac9b8ceee2a97f50c52cf666ed704425e17f48e6fe861dceee1b2743adfb",
    ),
    "eval[0] crm rows=7": (
        "20a4adc68396ecd4747bc457eae49c714bca465512d1d1dca0b7ed0418bfc6c4",
        "8021c16c6aa8631ded78017ae2102a240d66f0da15707fc6b1b695c65e131a11",
    ),
    "eval[0] crm rows=60": (
        "d1da42676a16712ad83fcc24b71310b4a3b5bb91c4d04c22f73f5b08382f670e",
        "b4837771d71aa7c82e4fc89a76e4064f6c56cdd5c71af2bf734cd9efe30dc390",
    ),
    "eval[0] crm rows=1000": (
        "e0f954f126dc2f2b23b28be6c07e2c098b4e45efd1359e6d3459755169b2bf92",
        "385d7af76d52bf4d5351c46bb848b03209f354af3800fa1f030db00b3e367a22",
    ),
    "eval[0] orders rows=None": (
        "e73e26bce18d267161e494a263262b347095475e49472319e3f0d49a7ec372de",
        "597bea57d3dab794dd4a1bb4f1dafe4825247714dedd3bdb7039c9bdd4afa9ed",
    ),
    "eval[0] orders rows=1": (
        "d71b032281559fae48a33c783d6e6acd8eab69c137d99962d73a59cffa125971",
        "137553e6f20ca0d8850b1eb3f1bf0e2c7d118820d2cea72181005552e6bb5bad",
    ),
    "eval[0] orders rows=2": (
        "9192021e179ee44b7fc28c07bc747e7ca092c4b4a167e00921f1f30b777565e2",
        "7a1ad0c72ec8f58728f96b69936cf9f246db006d1212f7b377e2212750a7e053",
    ),
    "eval[0] orders rows=3": (
        "01b2d1ecb2369f86dda778f8b5e6c48bbc168d3eb29a25fb756a37df00b8bd42",
        "2d27094920bf5deb77eaa19e948fd695205f3942fa45d7c9b6af491a0ec83686",
    ),
    "eval[0] orders rows=7": (
        "0ce47134ec15bd16859d84b27608be82f27a79def8ee5a7879c6a9a3eb366226",
        "bb075ecdf6354880e6106be5e958e97f8abe17de58a821d80f0135fd237ca01e",
    ),
    "eval[0] orders rows=60": (
        "847e8af1b0c8dafe7d26c099b7f157b6c2c76988a42229dd1664997044d1811d",
        "6450ab9ff1fabf8675d5940046c26e9bf835cb562ac3219c6a0718edb6e1e3c1",
    ),
    "eval[0] orders rows=1000": (
        "04333c053f4b72edfe8af3cb5b46759654e0ab45863fd0a50040e6a11c4fc090",
        "ee1e7d1d4bd6288a4125ebb9a480b04c6ced57abc99ce57aeea5277f86bb719e",
    ),
    "eval[0] inventory rows=None": (
        "421f6dc3be88fcfb5f994bc5abe287dc10ba6cb72772fca9f602c84b59824172",
        "39de45db5e626357525a01e0873d0e131fc1f3feaf3ae7c993b2c8620e7f7bd1",
    ),
    "eval[0] inventory rows=1": (
        "8d0ff5bec2b65fe1e7d7a36d655c034f6f3feb95afbd8675d757fb202654e731",
        "46f8e951390e43cd0fdc0c8e57db5d3a285cf9a5511b8d5b0a5d0d664f5f12bb",
    ),
    "eval[0] inventory rows=2": (
        "7921a6a3fb2a18c7731f4bce53e996e6b5a01ecc367c09a5b68c597d888805a2",
        "04120e59ba17a9f13d384dd0e12f535533e87a9ba716c0e23f73a8d471cabf48",
    ),
    "eval[0] inventory rows=3": (
        "f0770180983dbd69bd9819d3e72871c0af89203b3cc8b9f538d82ff5188268fb",
        "bca5eeff8c040ad353d96195122497e017fea0314b42f3f39c2049159a68b91f",
    ),
    "eval[0] inventory rows=7": (
        "1fc0bbf56dfb056e477c18bbd7b37a6f2ea94778a23550fba8833b99a53e6298",
        "14351641a9456972016720bf37e20a3351501cd3b8107a8d2be9a1828add4e2e",
    ),
    "eval[0] inventory rows=60": (
        "e292a27c199b2e68b02f595dc1cffd42a54ea3dcbc1052998567dc70d5ad42f6",
        "e2eb9c04e04ed65c2c5144dec33f97499bda90198cbbe410490a2257c56a8d51",
    ),
    "eval[0] inventory rows=1000": (
        "22e5b73c80081edae50c1c8f546282a78254013168d9f3d0c969874b27892bb8",
        "797cb3d80d733da6ff31f499b12d830b924d3ce5186c24b708bd9e6016562d19",
    ),
    "eval[0] all rows=None": (
        "839a65e81179a46d787ff5cb279658b694107dbe28a4cacc57b373500ade04ab",
        "597bea57d3dab794dd4a1bb4f1dafe4825247714dedd3bdb7039c9bdd4afa9ed",
    ),
    "eval[0] all rows=1": (
        "c7bc718d2b0cac3395624a3ffab1b9730da19c310cb7853bf61283d8ea649afa",
        "137553e6f20ca0d8850b1eb3f1bf0e2c7d118820d2cea72181005552e6bb5bad",
    ),
    "eval[0] all rows=2": (
        "4b775685d59d968ed163f60524cfb372dd4d8ff37dbb5adf3b1184de5168f661",
        "7a1ad0c72ec8f58728f96b69936cf9f246db006d1212f7b377e2212750a7e053",
    ),
    "eval[0] all rows=3": (
        "c48e2ece0c9ee82807af617d0d284528c99478ba63cf34bda5a2883332910fdd",
        "2d27094920bf5deb77eaa19e948fd695205f3942fa45d7c9b6af491a0ec83686",
    ),
    "eval[0] all rows=7": (
        "c01e51d1beb37d719be39e5cf5ff19bcff006714bebad432c2d40517fb05f02a",
        "bb075ecdf6354880e6106be5e958e97f8abe17de58a821d80f0135fd237ca01e",
    ),
    "eval[0] all rows=60": (
        "f8407be297b8f65b238aa246c094064f4f6c4a47032163fbce1e1fce5a67f4f3",
        "6450ab9ff1fabf8675d5940046c26e9bf835cb562ac3219c6a0718edb6e1e3c1",
    ),
    "eval[0] all rows=1000": (
        "1c8d9647cbe31f4c876ca2b90abd59b762002a4370ac64527f882a8566fb9df1",
        "ee1e7d1d4bd6288a4125ebb9a480b04c6ced57abc99ce57aeea5277f86bb719e",
    ),
    "eval[0] odd rows=None": (
        "4fc7858810c30df904355f7122d320f487fc8a8eda7b3a89a16d153bedf6450f",
        "e2c9a76d5c5330be8da8ba1b8f39d38a3e7d47f0ad904cde820730879321a72a",
    ),
    "eval[0] odd rows=1": (
        "dc004b137f7ca32eb08d2da000049fba6c6b3a6a96113e8743a0aea9b77ad46a",
        "aa4efc69f2f4792d4b78cdb37392bdc5a0f481f3bd69cbfd667e55456e400a43",
    ),
    "eval[0] odd rows=2": (
        "1bdd922a53ebf137279cbd4c869abc41f536fd2febd898f479ae1ce29e289d67",
        "df4ff6e872d53b98a165341812d9e379699b61f5c1eb0eaaede742439e52a684",
    ),
    "eval[0] odd rows=3": (
        "732a38200a515fe6e8ae2a12efb9d5f78f9e0beb217ed3a145ad81658be68d07",
        "0a98ce8eb1b7084f1001cb7f8a7b0850ff51638abacaed770186af4e904f7f17",
    ),
    "eval[0] odd rows=7": (
        "3156000c511367094ca42d82097e91c6e12ad602bcacddaa95ea2e934a008c69",
        "6bb635248d5f8e687098bfed0b3babe22a8e8cf6621ae50bf7fd62711a03ac07",
    ),
    "eval[0] odd rows=60": (
        "6f600f730360732783cf207a9318d69d4b65178001cc3af14b9df113af4e837c",
        "f1edddaee7f06b0f7205fa98b0cc24c3b9a9a3ea3e74ec6a1c5a3da94660973e",
    ),
    "eval[0] odd rows=1000": (
        "f75c601c6f837b3f901c9119b369227faeaf7f3cd5ac4a300c38697200fb404d",
        "fd358b72dc2d13d5bcd28ad66b923f285d51eabb60653dd6c60c951681522684",
    ),
    "eval[0] orders-copy rows=None": (
        "839a65e81179a46d787ff5cb279658b694107dbe28a4cacc57b373500ade04ab",
        "597bea57d3dab794dd4a1bb4f1dafe4825247714dedd3bdb7039c9bdd4afa9ed",
    ),
    "eval[0] orders-copy rows=1": (
        "c7bc718d2b0cac3395624a3ffab1b9730da19c310cb7853bf61283d8ea649afa",
        "137553e6f20ca0d8850b1eb3f1bf0e2c7d118820d2cea72181005552e6bb5bad",
    ),
    "eval[0] orders-copy rows=2": (
        "4b775685d59d968ed163f60524cfb372dd4d8ff37dbb5adf3b1184de5168f661",
        "7a1ad0c72ec8f58728f96b69936cf9f246db006d1212f7b377e2212750a7e053",
    ),
    "eval[0] orders-copy rows=3": (
        "c48e2ece0c9ee82807af617d0d284528c99478ba63cf34bda5a2883332910fdd",
        "2d27094920bf5deb77eaa19e948fd695205f3942fa45d7c9b6af491a0ec83686",
    ),
    "eval[0] orders-copy rows=7": (
        "c01e51d1beb37d719be39e5cf5ff19bcff006714bebad432c2d40517fb05f02a",
        "bb075ecdf6354880e6106be5e958e97f8abe17de58a821d80f0135fd237ca01e",
    ),
    "eval[0] orders-copy rows=60": (
        "f8407be297b8f65b238aa246c094064f4f6c4a47032163fbce1e1fce5a67f4f3",
        "6450ab9ff1fabf8675d5940046c26e9bf835cb562ac3219c6a0718edb6e1e3c1",
    ),
    "eval[0] orders-copy rows=1000": (
        "1c8d9647cbe31f4c876ca2b90abd59b762002a4370ac64527f882a8566fb9df1",
        "ee1e7d1d4bd6288a4125ebb9a480b04c6ced57abc99ce57aeea5277f86bb719e",
    ),
}
CASES = {name: case for name, *case in golden.cases() if name in PINNED}


def test_every_pinned_case_is_generated() -> None:
    assert set(CASES) == set(PINNED)


@pytest.mark.parametrize("name", sorted(PINNED))
def test_generated_task_and_its_scores_are_unchanged(name: str) -> None:
    seed, config, extra = CASES[name]
    world = golden.generate(seed, config, extra)
    assert (golden.world_digest(world), golden.score_digest(world)) == PINNED[name]
