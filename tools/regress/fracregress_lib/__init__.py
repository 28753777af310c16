# SPDX-License-Identifier: MIT
"""fracregress: store, verdicts, change points, stage attribution, reports (see README.md)."""
