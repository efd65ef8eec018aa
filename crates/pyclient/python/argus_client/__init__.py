"""Client of the Argus private iris uniqueness service.

Three Argus nodes each hold a meaningless share of every enrolled template; this client shares a
template, sends one share to each node over TLS and combines their answers. A template is two
eyes, each an open-iris ``IrisTemplate`` (or what its ``serialize()`` returns, or that as JSON
text)::

    import argus_client

    client = argus_client.Client("dep/client.toml")
    outcome = client.enroll(left, right)   # Outcome(unique=True, enrolled=0, ...)
    client.check(left2, right2).unique     # False: already enrolled
    client.verify(left2, right2, 0)        # True: 1:1 with identity 0 only

Failures raise ``ArgusError``: ``TemplateError`` for a template that cannot be read or is not in
the service's layout (nothing is sent), ``RefusedError`` when a node refuses the request.
"""

import json
import os
from typing import Any, Union

from ._native import ArgusError, Outcome, RefusedError, TemplateError
from ._native import Client as _NativeClient

__all__ = ["ArgusError", "Client", "Outcome", "RefusedError", "TemplateError", "eye_json"]


class Client:
    """A client of one deployment, configured by its ``client.toml`` (as ``argus setup`` writes).

    Calls block until the nodes answer (up to the file's ``timeout_s``), without holding the GIL:
    several threads may share one client.
    """

    def __init__(self, config: Union[str, "os.PathLike[str]"]):
        self._native = _NativeClient(os.fspath(config))

    def enroll(self, left: Any, right: Any) -> Outcome:
        """Enrols the template if no enrolled identity matches it; ``enrolled`` is its new id."""
        return self._native.enroll(eye_json(left, "left"), eye_json(right, "right"))

    def check(self, left: Any, right: Any) -> Outcome:
        """Whether the template is unique among the enrolled identities; enrols nothing."""
        return self._native.check(eye_json(left, "left"), eye_json(right, "right"))

    def verify(self, left: Any, right: Any, identity: int) -> bool:
        """Whether the template is enrolled identity ``identity`` (compared with it alone)."""
        return self._native.verify(eye_json(left, "left"), eye_json(right, "right"), identity)


def eye_json(eye: Any, which: str = "the") -> str:
    """One eye as open-iris JSON text, from any of:

    * an open-iris ``IrisTemplate`` (anything with a ``serialize()`` method),
    * the dict ``serialize()`` returns (base64 fields), or the nested-boolean form
      ``{"iris_codes": [...], "mask_codes": [...]}`` (numpy arrays allowed),
    * that dict already written as JSON (``str`` or ``bytes``).

    The Rust side parses and checks the contents; this only gets them into JSON.
    """
    if isinstance(eye, bytes):
        return eye.decode("utf-8")
    if isinstance(eye, str):
        return eye
    if callable(getattr(eye, "serialize", None)):
        eye = eye.serialize()
    if not isinstance(eye, dict):
        raise TemplateError(
            f"{which} eye: expected an open-iris IrisTemplate, the dict its serialize() returns, "
            f"or JSON text; got {type(eye).__name__}"
        )
    try:
        return json.dumps(eye, default=_tolist)
    except (TypeError, ValueError) as e:
        raise TemplateError(f"{which} eye: cannot be written as JSON: {e}") from None


def _tolist(value: Any) -> Any:
    """JSON for numpy arrays (open-iris's ``iris_codes`` are lists of them): nested lists."""
    if callable(getattr(value, "tolist", None)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")
