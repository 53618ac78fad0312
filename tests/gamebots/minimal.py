"""Well-behaved minimal bot: draws from the stock, never buys, discards the first option."""
import common

common.run()
