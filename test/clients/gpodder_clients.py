"""Drives the real gpodder.net clients against a castsync server, as Debian ships them.

Usage: /usr/bin/python3 gpodder_clients.py ORIGIN USERNAME PASSWORD WORKDIR
Prints one JSON object with what each client saw. Run by test/process/real-clients.test.ts.
"""
import json
import os
import sys

origin, username, password, workdir = sys.argv[1:5]
out = {}

# 1. mygpoclient, the library behind gPodder and others.
from mygpoclient import api

client = api.MygPodderClient(username, password, origin)
client.update_device_settings('pyclient', caption='mygpoclient test', type='desktop')
out['devices'] = [
    {'id': d.device_id, 'caption': d.caption, 'type': d.type, 'subscriptions': d.subscriptions}
    for d in client.get_devices()
]
first = client.pull_subscriptions('pyclient', since=0)
out['first_pull'] = {'add': first.add, 'remove': first.remove, 'since': first.since}
update = client.update_subscriptions(
    'pyclient',
    add_urls=['https://real.example/mygpo-1.xml', 'itpc://real.example/mygpo-2.xml'],
    remove_urls=[],
)
out['update'] = {'update_urls': [list(p) for p in update.update_urls], 'since': update.since}
later = client.pull_subscriptions('pyclient', since=first.since)
out['pull_since'] = {'add': later.add, 'remove': later.remove, 'since': later.since}
out['put'] = client.put_subscriptions('pyclient', ['https://real.example/simple-put.xml'])
out['simple_get'] = client.get_subscriptions('pyclient')
# The simple API's OPML download, through mygpoclient's own HTTP client (cookies, Basic after a challenge).
from mygpoclient import http, locator

opml = http.HttpClient(username, password).GET(locator.Locator(username, origin).subscriptions_uri('pyclient', 'opml'))
out['opml_has_outlines'] = opml.decode('utf-8').count('<outline type="rss"')

# Episode actions: a play to 1234 s and a download, then read back.
episodes_before = client.download_episode_actions(since=0)
client.upload_episode_actions([
    api.EpisodeAction('https://real.example/mygpo-1.xml', 'https://real.example/mygpo-1/ep1.mp3', 'play',
                      device='pyclient', timestamp='2026-11-20T08:30:15', started=0, position=1234, total=3000),
    api.EpisodeAction('https://real.example/mygpo-1.xml', 'https://real.example/mygpo-1/ep2.mp3', 'download',
                      device='pyclient', timestamp='2026-11-20T08:31:00'),
])
changes = client.download_episode_actions(since=episodes_before.since)
out['episodes'] = [
    {'podcast': a.podcast, 'episode': a.episode, 'action': a.action, 'device': a.device,
     'timestamp': a.timestamp, 'started': a.started, 'position': a.position, 'total': a.total}
    for a in changes.actions
]

# 2. gPodder's own sync logic, headless: its queue of actions and its worker, with a config file.
os.environ['GPODDER_HOME'] = os.path.join(workdir, 'gpodder-home')
os.makedirs(os.environ['GPODDER_HOME'], exist_ok=True)
import gpodder

gpodder.set_home(os.environ['GPODDER_HOME'])
from gpodder import config, my

cfg = config.Config(os.path.join(workdir, 'gpodder.json'))
cfg.mygpo.server = origin
cfg.mygpo.username = username
cfg.mygpo.password = password
cfg.mygpo.device.uid = 'gpodder-desktop'
cfg.mygpo.device.caption = 'gPodder test'
cfg.mygpo.device.type = 'laptop'
cfg.mygpo.enabled = True
gp = my.MygPoClient(cfg)
gp.create_device()
gp.on_subscribe(['https://real.example/gpodder-1.xml'])
gp._store.save(my.EpisodeAction('https://real.example/gpodder-1.xml', 'https://real.example/gpodder-1/ep.mp3',
                                'gpodder-desktop', 'play', 1795000000, 10, 600, 1800))
gp._worker_proc(forced=True)
received = gp._store.load(my.ReceivedSubscribeAction)
out['gpodder_received_adds'] = sorted(a.url for a in received if a.is_add)
out['gpodder_enabled_after'] = bool(cfg.mygpo.enabled)
out['gpodder_pending_episode_actions'] = len(gp._store.load(my.EpisodeAction))
out['gpodder_received_episodes'] = sorted(
    (a.episode_url, a.action, a.position) for a in gp._store.load(my.ReceivedEpisodeAction))
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)
