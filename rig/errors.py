# SPDX-License-Identifier: GPL-3.0-or-later
"""The one error the rig layer raises, which scripts meet as ``limb_ik.api.LimbIKError``."""


class LimbIKError(Exception):
    """A rig or limb that cannot be solved as it is set up. The message is one sentence for the user,
    naming the limb, bone or object at fault; ``problems`` holds a sentence per limb at fault when
    there are several (planted feet without ground under them)."""

    def __init__(self, message: str, problems: dict[str, str] | None = None):
        super().__init__(message)
        self.problems = problems or {}
