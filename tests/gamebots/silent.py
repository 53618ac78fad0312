"""Says ready, then reads every request and never answers."""
import common

common.run(on_request=lambda msg: None)
