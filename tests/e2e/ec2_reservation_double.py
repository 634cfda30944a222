#!/usr/bin/env python3
"""An HTTP stand-in in front of moto for the one EC2 API moto lacks that the AWS
provider's capacity reservations need: DescribeCapacityReservations (moto 5.1 and
5.2 answer it with HTTP 500, not implemented; scripts/moto-probe.py).

    ec2_reservation_double.py MOTO_URL RESERVATIONS.json LOG PORTFILE

Listens on a free loopback port (written to PORTFILE once it accepts) and forwards
every request to MOTO_URL byte for byte, except:

  DescribeCapacityReservations   answered here, in EC2's documented query-protocol
                                 XML, from RESERVATIONS.json (a list of {"id",
                                 "instanceType", "zone", "zoneId", "total", "tags",
                                 "ownerId", "matchCriteria", "type"}); ids and
                                 the filters the provider sends (state, owner-id,
                                 tag:KEY, instance-match-criteria, instance-type,
                                 availability-zone) apply; an unknown id is EC2's
                                 InvalidCapacityReservationId.NotFound.

Because moto knows no reservations, it also drops the reservation a launch template
targets. So that what EC2 would report stays true, the double remembers which launch
templates target a reservation (CreateLaunchTemplate, forwarded), which instances a
CreateFleet of such a template started, and which of them TerminateInstances ended:
a reservation's availableInstanceCount is its total minus its running instances, and
DescribeInstances answers (from moto) gain the capacityReservationId and
capacityReservationSpecification EC2 reports for those instances. Every request's
action, and the reservation fields of launches, go to LOG as JSON lines.

Test code: stdlib only, one thread per connection, a deadline on every socket.
"""
import http.client
import http.server
import json
import os
import re
import sys
import threading
import urllib.parse
import uuid
from xml.sax.saxutils import escape

MOTO = urllib.parse.urlsplit(sys.argv[1])
RESERVATIONS = json.load(open(sys.argv[2]))
LOG = open(sys.argv[3], "a", buffering=1)
PORTFILE = sys.argv[4]
TIMEOUT = 60
MAX_BODY = 16 << 20
NS = "http://ec2.amazonaws.com/doc/2016-11-15/"
CR_ID_KEY = "LaunchTemplateData.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId"
CR_PREF_KEY = "LaunchTemplateData.CapacityReservationSpecification.CapacityReservationPreference"

lock = threading.Lock()
template_cr = {}  # launch template name or id -> reservation id
instance_cr = {}  # running instance id -> reservation id


def log(**entry):
    with lock:
        LOG.write(json.dumps(entry, sort_keys=True) + "\n")


def numbered(form, prefix):
    """Values of PREFIX.1, PREFIX.2, ... in order."""
    out, i = [], 1
    while prefix + ".%d" % i in form:
        out.append(form[prefix + ".%d" % i])
        i += 1
    return out


def filters(form):
    out, i = {}, 1
    while "Filter.%d.Name" % i in form:
        out[form["Filter.%d.Name" % i]] = numbered(form, "Filter.%d.Value" % i)
        i += 1
    return out


def available(r):
    with lock:
        used = sum(1 for cr in instance_cr.values() if cr == r["id"])
    return max(0, r["total"] - used)


def matches(r, flt):
    fields = {"state": "active", "owner-id": r.get("ownerId", "123456789012"),
              "instance-match-criteria": r.get("matchCriteria", "targeted"),
              "instance-type": r["instanceType"], "availability-zone": r["zone"]}
    for name, values in flt.items():
        if name.startswith("tag:"):
            have = r.get("tags", {}).get(name[4:])
        elif name in fields:
            have = fields[name]
        else:
            continue  # a filter EC2 has and the provider does not send: not modelled
        if have not in values:
            return False
    return True


def item_xml(r):
    owner = r.get("ownerId", "123456789012")
    tags = "".join("<item><key>%s</key><value>%s</value></item>" % (escape(k), escape(v))
                   for k, v in sorted(r.get("tags", {}).items()))
    return ("<item><capacityReservationId>{id}</capacityReservationId><ownerId>{owner}</ownerId>"
            "<capacityReservationArn>arn:aws:ec2:us-east-1:{owner}:capacity-reservation/{id}</capacityReservationArn>"
            "<availabilityZoneId>{zid}</availabilityZoneId><instanceType>{it}</instanceType>"
            "<instancePlatform>Linux/UNIX</instancePlatform><availabilityZone>{zone}</availabilityZone>"
            "<tenancy>default</tenancy><totalInstanceCount>{total}</totalInstanceCount>"
            "<availableInstanceCount>{avail}</availableInstanceCount><ebsOptimized>true</ebsOptimized>"
            "<ephemeralStorage>false</ephemeralStorage><state>active</state>"
            "<startDate>2026-01-01T00:00:00.000Z</startDate><endDateType>unlimited</endDateType>"
            "<instanceMatchCriteria>{imc}</instanceMatchCriteria><createDate>2026-01-01T00:00:00.000Z</createDate>"
            "<tagSet>{tags}</tagSet><reservationType>{type}</reservationType></item>").format(
        id=escape(r["id"]), owner=escape(owner), zid=escape(r.get("zoneId", "")), it=escape(r["instanceType"]),
        zone=escape(r["zone"]), total=r["total"], avail=available(r), imc=escape(r.get("matchCriteria", "targeted")),
        tags=tags, type=escape(r.get("type", "default")))


def describe_capacity_reservations(form):
    ids = numbered(form, "CapacityReservationId")
    known = {r["id"]: r for r in RESERVATIONS}
    for i in ids:
        if i not in known:
            body = ("<Response><Errors><Error><Code>InvalidCapacityReservationId.NotFound</Code>"
                    "<Message>The capacity reservation ID '%s' does not exist</Message></Error></Errors>"
                    "<RequestID>%s</RequestID></Response>") % (escape(i), uuid.uuid4())
            return 400, body
    chosen = [known[i] for i in ids] if ids else RESERVATIONS
    flt = filters(form)
    items = "".join(item_xml(r) for r in chosen if matches(r, flt))
    body = ('<?xml version="1.0" encoding="UTF-8"?>\n<DescribeCapacityReservationsResponse xmlns="%s">'
            "<requestId>%s</requestId><capacityReservationSet>%s</capacityReservationSet>"
            "</DescribeCapacityReservationsResponse>") % (NS, uuid.uuid4(), items)
    log(action="DescribeCapacityReservations", ids=ids, filters=flt,
        available={r["id"]: available(r) for r in chosen if matches(r, flt)})
    return 200, body


def instance_ids(xml):
    return re.findall(r"<(?:instanceId|item)>(i-[0-9a-f]+)</(?:instanceId|item)>", xml)


def remember_template(form, body):
    cr = form.get(CR_ID_KEY)
    log(action="CreateLaunchTemplate", name=form.get("LaunchTemplateName"), reservation=cr,
        preference=form.get(CR_PREF_KEY), market=form.get("LaunchTemplateData.InstanceMarketOptions.MarketType"))
    if not cr:
        return
    m = re.search(r"<launchTemplateId>([^<]+)</launchTemplateId>", body)
    with lock:
        template_cr[form.get("LaunchTemplateName")] = cr
        if m:
            template_cr[m.group(1)] = cr


def remember_fleet(form, body):
    crs = set()
    i = 1
    while "LaunchTemplateConfigs.%d.LaunchTemplateSpecification.Version" % i in form:
        spec = "LaunchTemplateConfigs.%d.LaunchTemplateSpecification." % i
        key = form.get(spec + "LaunchTemplateName") or form.get(spec + "LaunchTemplateId")
        with lock:
            if key in template_cr:
                crs.add(template_cr[key])
        i += 1
    started = instance_ids(body)
    log(action="CreateFleet", reservations=sorted(crs), instances=started,
        capacity_type=form.get("TargetCapacitySpecification.DefaultTargetCapacityType"))
    if len(crs) == 1:
        with lock:
            for iid in started:
                instance_cr[iid] = next(iter(crs))


def annotate_instances(body):
    """moto's DescribeInstances answer, with the reservation fields EC2 reports."""
    with lock:
        known = dict(instance_cr)

    def add(m):
        cr = known.get(m.group(1))
        if not cr:
            return m.group(0)
        return (m.group(0) + "<capacityReservationId>%s</capacityReservationId>"
                "<capacityReservationSpecification><capacityReservationPreference>capacity-reservations-only"
                "</capacityReservationPreference><capacityReservationTarget><capacityReservationId>%s"
                "</capacityReservationId></capacityReservationTarget></capacityReservationSpecification>") % (cr, cr)
    return re.sub(r"<instanceId>(i-[0-9a-f]+)</instanceId>", add, body)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = TIMEOUT

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def forward(self, body):
        conn = http.client.HTTPConnection(MOTO.hostname, MOTO.port, timeout=TIMEOUT)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "content-length")}
            conn.request(self.command, self.path, body=body, headers=headers)
            r = conn.getresponse()
            return r.status, r.getheaders(), r.read()
        finally:
            conn.close()

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n < 0 or n > MAX_BODY:
            self.reply(413, [], b"request too large")
            return
        body = self.rfile.read(n) if n else b""
        form = {}
        if "x-www-form-urlencoded" in (self.headers.get("Content-Type") or ""):
            form = dict(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        action = form.get("Action")
        if action == "DescribeCapacityReservations":
            status, xml = describe_capacity_reservations(form)
            self.reply(status, [("Content-Type", "text/xml;charset=UTF-8")], xml.encode())
            return
        status, headers, out = self.forward(body)
        text = out.decode("utf-8", "replace")
        if action == "CreateLaunchTemplate" and status == 200:
            remember_template(form, text)
        elif action == "CreateFleet" and status == 200:
            remember_fleet(form, text)
        elif action == "TerminateInstances":
            ended = numbered(form, "InstanceId")
            with lock:
                for iid in ended:
                    instance_cr.pop(iid, None)
            log(action=action, instances=ended)
        elif action == "DescribeInstances" and status == 200:
            out = annotate_instances(text).encode()
            log(action=action, status=status)
        elif action:
            log(action=action, status=status)
        self.reply(status, headers, out)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(PORTFILE + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.replace(PORTFILE + ".tmp", PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
