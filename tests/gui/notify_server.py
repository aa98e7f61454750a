"""A fake freedesktop notification server for tests/gui/attention.sh: owns
org.freedesktop.Notifications on the (private) session bus and appends one line per Notify call
to the file named by its argument: "notify urgency=N summary=... body=...".
Runs under /usr/bin/python3 (Debian's python3-dbus and python3-gi)."""
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus, log):
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.log = log
        self.next_id = 0

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        self.next_id += 1
        urgency = int(hints.get("urgency", 1))
        with open(self.log, "a") as out:
            out.write("notify app=%s urgency=%d replaces=%d summary=%s body=%s\n" % (app, urgency, replaces, summary, body))
        return dbus.UInt32(replaces or self.next_id)

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["body"]

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("tuic-test", "tuic", "1", "1.2")


DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
name = dbus.service.BusName(NAME, bus, do_not_queue=True)
Server(bus, sys.argv[1])
with open(sys.argv[1], "a") as ready:
    ready.write("ready\n")
GLib.MainLoop().run()
