"""Forks a child that sleeps forever (holding the pipes), then plays like the minimal bot."""
import os
import time

import common

if os.fork() == 0:
    while True:
        time.sleep(3600)
common.run()
