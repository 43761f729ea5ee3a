"""A complete ``ul.Mechanism`` class body with members to drop, for the class-creation tests of the mechanism
contract (tests/mechanisms/core/test_base.py, test_protocol.py)."""

import uldp_jax as ul


def _keep_body(**drop):
    body = {
        "__annotations__": {"d": "int", "eps": "float"},
        "d": ul.static_field(),
        "report_kind": "item",
        "num_outputs": property(lambda self: self.d),
        "perturb_batch": lambda self, key, xs: xs,
        "privacy_spec": lambda self: ul.PrivacySpec.ldp(self.d, self.eps),
    }
    for name in drop:
        body.pop(name)
        body["__annotations__"].pop(name, None)
    return body
