#!/usr/bin/env python3
"""Reads a TensorBoard log folder with TensorBoard's own loader and prints every scalar, to check
that the event files Kiln writes (src/kiln/train/tensorboard_writer.cpp) are what TensorBoard
expects. CI has no TensorBoard, so tests/tensorboard_test.cpp checks bytes and CRCs instead.

Usage: pip install tensorboard; python3 tests/fixtures_gen/read_tensorboard.py LOG_DIR
  e.g. LOG_DIR = output_dir/runs/<timestamp>_<host>, or the folder tensorboard_test leaves under
  $TMPDIR/kiln_tensorboard/TensorBoardWriter.WritesEventsThatReadBack/runs/a
Exits with status 1 when the folder holds no scalars.
"""
import sys

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    accumulator = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})  # 0: keep all
    accumulator.Reload()
    tags = accumulator.Tags()["scalars"]
    if not tags:
        print(f"no scalars in {sys.argv[1]}", file=sys.stderr)
        sys.exit(1)
    for tag in sorted(tags):
        for event in accumulator.Scalars(tag):
            print(f"{tag}\tstep={event.step}\tvalue={event.value!r}"
                  f"\twall_time={event.wall_time:.6f}")


if __name__ == "__main__":
    main()
