"""Hooks of end2end/fuzz.sh's schemathesis runs.

Each generated request that carries a well-formed `Idempotency-Key` gets a key of its own: the
server replays or refuses (422 `idempotency_key_reused`) a key that came with another request,
as the API promises, and a partner sends a fresh key with each new request. Generated keys
repeat (the shortest strings first), so without this most writes would be refused for reuse.
"""

import itertools
import re

import schemathesis

_WELL_FORMED = re.compile(r"^[\t -~]*[!-~][\t -~]*$")
_SEQUENCE = itertools.count()


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() != "idempotency-key":
            continue
        key = headers[name]
        if isinstance(key, str) and len(key) <= 255 and _WELL_FORMED.match(key):
            suffix = f"-{next(_SEQUENCE)}"
            headers[name] = key.strip()[: 255 - len(suffix)] + suffix
