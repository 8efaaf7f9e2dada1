/** The sample events parse and route as their README says. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../../events/envelope.ts';
import { RelayCache } from '../../../shared/routing/cache.ts';
import { ROUTES, route } from '../../../shared/routing/index.ts';
import { extensionOf, parseCloudEvent } from '../../../shared/runtimes/cloudevents.ts';

const DIR = new URL('../../../events/samples/', import.meta.url).pathname;
const read = (f: string) => JSON.parse(readFileSync(join(DIR, f), 'utf8'));

describe('events/samples', () => {
  it('envelopes parse', () => {
    for (const f of readdirSync(DIR).filter((f) => f.startsWith('envelope-'))) {
      expect(() => parseEnvelope(readFileSync(join(DIR, f), 'utf8')), f).not.toThrow();
    }
  });

  it('the host watch event routes to its consumer machine, for selectHost and resolveProviderID', () => {
    const ev = read('watch-baremetalhost-provisioned.json');
    const cache = new RelayCache();
    cache.store('Metal3Machine').upsert({
      kind: 'Metal3Machine',
      metadata: { name: 'test1-controlplane-0', namespace: 'metal3', uid: 'm', resourceVersion: '9' },
    });
    const msgs = route(ev, cache).map((m) => `${m.msg.function} ${m.msg.name}`);
    expect(msgs).toEqual(['selectHost test1-controlplane-0', 'resolveProviderID test1-controlplane-0']);
  });

  it('functions/relay/README.md lists every route of the table', () => {
    const readme = readFileSync(new URL('../../../functions/relay/README.md', import.meta.url), 'utf8');
    // Cells may be padded (biome formats the table); compare trimmed cells.
    const cells = new Set(readme.split('\n').flatMap((line) => line.split('|').map((c) => c.trim())));
    for (const r of ROUTES) expect(cells.has(r.name), r.name).toBe(true);
  });

  it('CloudEvent samples parse in structured mode', () => {
    for (const f of ['cloudevent-message.json', 'cloudevent-apiserver-resource-update.json']) {
      const ce = parseCloudEvent(
        new Headers({ 'content-type': 'application/cloudevents+json' }),
        readFileSync(join(DIR, f), 'utf8'),
      );
      expect(ce.specversion).toBe('1.0');
    }
    const msg = parseCloudEvent(
      new Headers({ 'content-type': 'application/cloudevents+json' }),
      readFileSync(join(DIR, 'cloudevent-message.json'), 'utf8'),
    );
    expect(parseEnvelope(msg.data).function).toBe('selectHost');
    expect(extensionOf(msg, 'function')).toBe('selectHost');
  });
});
