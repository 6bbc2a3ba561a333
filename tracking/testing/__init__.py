"""Test helpers shipped with the package: the `Tracker` conformance suite (`tracker_suite`)."""

from tracking.testing.tracker_suite import TrackerSuite

__all__ = ["TrackerSuite"]
