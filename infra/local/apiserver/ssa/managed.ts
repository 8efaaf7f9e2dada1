/**
 * metadata.managedFields, kept on every write as the apiserver's field manager keeps it
 * (k8s.io/apimachinery/pkg/util/managedfields/internal: fieldmanager.go and the managers it
 * chains, outermost first: versioncheck, lastappliedupdater, lastappliedmanager, skipnonapplied,
 * capmanagers, buildmanagerinfo, managedfieldsupdater, stripmeta, structuredmerge).
 *
 * - Update (create, PUT, non-apply PATCH): the manager (fieldManager, else the User-Agent's
 *   first segment) owns what it changed; managedFields sent in the request replace the live ones
 *   when they decode (`[]` resets them); an object without managedFields is not tracked by updates.
 * - Apply: owns exactly its configuration's fields, conflicts (409) over fields other managers own
 *   whose value it changes unless force=true, removes fields it stopped applying that nobody else
 *   owns; an object without managedFields first gets a "before-first-apply" manager owning it all.
 * - kubectl's apply: the last-applied-configuration annotation lets `kubectl` take over fields it
 *   applied client-side, and is kept current by a server-side apply.
 */
import { apiVersionOf, type ServedKind } from '../kinds.ts';
import { deepEqual } from '../patch.ts';
import { ApiError, badRequest } from '../status.ts';
import { builtinSchema, OBJECT_META, zeroObject } from './builtin-schemas.ts';
import { FieldSet, fieldPE, forgetParsed, goJson, type Path, pathString } from './fieldpath.ts';
import { type Atom, type RefResolver, TypeBuilder } from './types.ts';
import { ConflictsError, type Managers, Updater } from './updater.ts';
import { compare, TypedError, toFieldSet, validate } from './walk.ts';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

interface Managed {
  fields: Managers;
  times: Map<string, string | undefined>;
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const MAX_UPDATE_MANAGERS = 10;

/** Paths no manager owns (stripmeta.go). */
const STRIP = FieldSet.of(
  [fieldPE('apiVersion')],
  [fieldPE('kind')],
  [fieldPE('metadata')],
  ...[
    'name',
    'namespace',
    'creationTimestamp',
    'selfLink',
    'uid',
    'clusterName',
    'generation',
    'managedFields',
    'resourceVersion',
  ].map((f) => [fieldPE('metadata'), fieldPE(f)]),
);

/** The manager identifier: the entry without fields and time, JSON in Go's field order (BuildManagerIdentifier). */
export function managerId(e: {
  manager: string;
  operation: string;
  apiVersion?: string;
  subresource?: string;
}): string {
  const key = `${e.manager}\u0000${e.operation}\u0000${e.apiVersion ?? ''}\u0000${e.subresource ?? ''}`;
  let id = ids.get(key);
  if (id === undefined) {
    const o: Record<string, string> = { manager: e.manager, operation: e.operation };
    if (e.operation !== 'Apply' && e.apiVersion) o.apiVersion = e.apiVersion;
    if (e.subresource) o.subresource = e.subresource;
    id = JSON.stringify(o);
    if (ids.size > 10_000) ids.clear();
    ids.set(key, id);
  }
  return id;
}
const ids = new Map<string, string>();

/** A write replaced `before` with `after`: the fieldsV1 it no longer holds leave the parsed cache (fieldpath.ts forgetParsed). */
export function replacedManagedFields(
  before: readonly ManagedFieldsEntry[] | undefined,
  after: readonly ManagedFieldsEntry[] | undefined,
): void {
  if (!Array.isArray(before) || before === after) return;
  const kept = new Set(after?.map((e) => e.fieldsV1));
  for (const e of before) if (!kept.has(e.fieldsV1)) forgetParsed(e.fieldsV1);
}

function decode(entries: unknown): Managed {
  const m: Managed = { fields: new Map(), times: new Map() };
  if (entries === undefined || entries === null) return m;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  entries.forEach((raw, i) => {
    const e = (raw ?? {}) as ManagedFieldsEntry;
    if (e.operation !== 'Apply' && e.operation !== 'Update')
      throw new Error('operation must be `Apply` or `Update`');
    if (!e.apiVersion) throw new Error('apiVersion must not be empty');
    if (!e.fieldsType) throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1')
      throw new Error(`invalid fieldsType "${e.fieldsType}" in managed fields entry ${i}`);
    const id = managerId({
      manager: e.manager ?? '',
      operation: e.operation,
      apiVersion: e.apiVersion,
      subresource: e.subresource,
    });
    m.fields.set(id, {
      set: FieldSet.fromJSON(e.fieldsV1 ?? {}),
      apiVersion: e.apiVersion,
      applied: e.operation === 'Apply',
    });
    m.times.set(id, e.time);
  });
  return m;
}

/** Seconds since the epoch of an RFC 3339 time (0 when absent), as the sorts below compare times. */
function seconds(t: string | undefined): number {
  if (!t) return 0;
  let v = parsedTimes.get(t);
  if (v === undefined) {
    v = Math.floor(Date.parse(t) / 1000);
    if (parsedTimes.size > 10_000) parsedTimes.clear();
    parsedTimes.set(t, v);
  }
  return v;
}
const parsedTimes = new Map<string, number>();

function encode(m: Managed): ManagedFieldsEntry[] | undefined {
  if (m.fields.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of m.fields) {
    const parsed = JSON.parse(id) as ManagedFieldsEntry;
    const e: ManagedFieldsEntry = {
      manager: parsed.manager,
      operation: vs.applied ? 'Apply' : 'Update',
      apiVersion: vs.apiVersion,
    };
    const t = m.times.get(id);
    if (t) e.time = t;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = vs.set.toJSON();
    if (parsed.subresource) e.subresource = parsed.subresource;
    out.push(e);
  }
  // sortEncodedManagedFields: operation, time (seconds), manager, apiVersion, subresource.
  const cmp = (a = '', b = '') => (a < b ? -1 : a > b ? 1 : 0);
  return out.sort(
    (p, q) =>
      cmp(p.operation, q.operation) ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager, q.manager) ||
      cmp(p.apiVersion, q.apiVersion) ||
      cmp(p.subresource, q.subresource),
  );
}

/** `[]` or `[{}]` in a request clears managedFields (isResetManagedFields). */
function isReset(v: unknown): boolean {
  if (!Array.isArray(v)) return false;
  if (v.length === 0) return true;
  return v.length === 1 && v[0] !== null && typeof v[0] === 'object' && Object.keys(v[0]).length === 0;
}

function stripMeta(m: Managed, id: string): void {
  const vs = m.fields.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIP);
  if (set.empty()) m.fields.delete(id);
  else m.fields.set(id, { ...vs, set });
}

/** Merges the oldest Update managers into "ancient-changes" beyond 10 of them (capmanagers.go). */
function capUpdateManagers(m: Managed): void {
  if (m.fields.size <= MAX_UPDATE_MANAGERS) return;
  const updaters = [...m.fields].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  updaters.sort((a, b) => seconds(m.times.get(a)) - seconds(m.times.get(b)) || (a < b ? -1 : a > b ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const id = updaters[i]!;
    const vs = m.fields.get(id)!;
    const bucket = managerId({ manager: 'ancient-changes', operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstOfVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!m.fields.has(bucket)) {
      m.fields.set(bucket, m.fields.get(first)!);
      m.fields.delete(first);
    }
    m.fields.set(bucket, { ...vs, set: vs.set.union(m.fields.get(bucket)!.set) });
    m.fields.delete(id);
    length--;
    m.times.set(bucket, m.times.get(id));
  }
}

/** "conflict with ..." as conflict.go printManager prints a manager identifier. */
function printManager(id: string): string {
  let e: ManagedFieldsEntry;
  try {
    e = JSON.parse(id);
  } catch {
    return JSON.stringify(id);
  }
  let s = JSON.stringify(e.manager ?? '');
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion}`;
  return s;
}

/** 409 with one FieldManagerConflict cause per field (conflict.go NewConflictError). */
export function conflictError(conflicts: { manager: string; path: Path }[]): ApiError {
  const causes = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts)
      byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), pathString(c.path)]);
    const lines: string[] = [];
    for (const m of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${printManager(m)}:`);
      for (const p of byManager.get(m)!) lines.push(`- ${p}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new ApiError(409, 'Conflict', message, { causes });
}

const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const withoutManaged = (o: any) =>
  isObj(o?.metadata) && 'managedFields' in o.metadata
    ? {
        ...o,
        metadata: Object.fromEntries(Object.entries(o.metadata).filter(([k]) => k !== 'managedFields')),
      }
    : o;

export interface FieldManagerOptions {
  /** Manager name (already defaulted from the User-Agent); "" becomes "unknown". */
  manager: string;
  subresource?: string | undefined;
}

/** The field manager of one server: types per kind, times from the server clock. */
export class FieldManager {
  private readonly types: TypeBuilder;
  private readonly atoms = new WeakMap<ServedKind, Atom>();
  private readonly timestamp: () => string;

  /** `resolve` resolves `$ref`s of built-in kinds' OpenAPI schemas (ServedKind.schema), when they have some. */
  constructor(timestamp: () => string, resolve?: RefResolver) {
    this.timestamp = timestamp;
    this.types = new TypeBuilder(resolve);
  }

  /** The type of a kind's objects: its schema (a CRD's, or a built-in's) with ObjectMeta for metadata. */
  atom(kind: ServedKind): Atom {
    let a = this.atoms.get(kind);
    if (!a) {
      const schema = kind.builtin ? (kind.schema ?? builtinSchema(kind.resource)) : kind.schema;
      const root = schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      a = this.types.atom({
        ...root,
        type: 'object',
        properties: {
          ...(root.properties ?? {}),
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: OBJECT_META,
        },
      });
      this.atoms.set(kind, a);
    }
    return a;
  }

  /** Fields the strategy resets, ignored in ownership (GetResetFields of the kind's strategies). */
  private ignored(kind: ServedKind, subresource: string | undefined): FieldSet | undefined {
    if (subresource === 'status') {
      if (kind.resource === 'apiextensions.k8s.io/customresourcedefinitions')
        return FieldSet.of([fieldPE('metadata')], [fieldPE('spec')]);
      return FieldSet.of([fieldPE('spec')]);
    }
    return kind.status ? FieldSet.of([fieldPE('status')]) : undefined;
  }

  /**
   * managedFields after a create (`live` undefined) or an update to `next` (UpdateNoErrors: a
   * failure keeps the live ones). `requested` is what the request carried in metadata.managedFields.
   */
  update(
    kind: ServedKind,
    live: any | undefined,
    next: any,
    requested: unknown,
    opts: FieldManagerOptions,
  ): ManagedFieldsEntry[] | undefined {
    const liveManaged = live?.metadata?.managedFields;
    try {
      let m: Managed;
      if (opts.subresource) m = safeDecode(liveManaged);
      else if (isReset(requested)) m = decode(undefined);
      else {
        let fromRequest: Managed | undefined;
        try {
          fromRequest = decode(requested);
        } catch {
          fromRequest = undefined;
        }
        m = fromRequest && fromRequest.fields.size > 0 ? fromRequest : safeDecode(liveManaged);
      }
      // An existing object nobody tracks stays untracked by updates (skipnonapplied.go).
      if (m.fields.size === 0 && live) return undefined;
      const from = live
        ? withoutManaged(live)
        : zeroObject(kind.resource, kind.builtin, apiVersionOf(kind), kind.kind);
      this.trackUpdate(kind, from, withoutManaged(next), m, opts.manager, opts.subresource);
      capUpdateManagers(m);
      return encode(m);
    } catch {
      return liveManaged;
    }
  }

  /** The Update chain below skipnonapplied: buildmanagerinfo, managedfieldsupdater, stripmeta, structuredmerge. */
  private trackUpdate(
    kind: ServedKind,
    from: unknown,
    to: unknown,
    m: Managed,
    manager: string,
    subresource: string | undefined,
  ): void {
    const version = apiVersionOf(kind);
    const id = managerId({
      manager: manager || 'unknown',
      operation: 'Update',
      apiVersion: version,
      subresource,
    });
    const self = 'current-operation';
    new Updater(this.atom(kind), this.ignored(kind, subresource)).updateManagers(
      from,
      to,
      version,
      m.fields,
      self,
    );
    stripMeta(m, self);
    const vs = m.fields.get(self);
    if (!vs) return;
    m.fields.delete(self);
    const prev = m.fields.get(id);
    m.fields.set(id, {
      set: prev ? vs.set.union(prev.set) : vs.set,
      apiVersion: vs.apiVersion,
      applied: false,
    });
    m.times.set(id, this.timestamp());
  }

  /**
   * A server-side apply of `config` to `live` (undefined: the object does not exist yet). Returns
   * the object to write (managedFields set) or undefined when nothing would change. Throws 400 for
   * a configuration of another kind or carrying managedFields, 409 for conflicts, 500 for a
   * configuration its schema cannot type (as upstream's "failed to create typed patch object").
   */
  apply(
    kind: ServedKind,
    live: any | undefined,
    config: any,
    opts: FieldManagerOptions & { force: boolean },
  ): any {
    const av = apiVersionOf(kind);
    const group = kind.group;
    const [cfgGroup, cfgVersion] = splitApiVersion(config.apiVersion);
    if (config.apiVersion !== av || config.kind !== kind.kind) {
      throw badRequest(`invalid object type: ${cfgGroup}/${cfgVersion}, Kind=${config.kind ?? ''}`);
    }
    if (config.metadata?.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
    const atom = this.atom(kind);
    const errors = validate(config, atom);
    if (errors.length) {
      const where = `${config.metadata?.namespace ?? ''}/${config.metadata?.name ?? ''}; ${group}/${kind.version}, Kind=${kind.kind}`;
      const text = errors.length === 1 ? errors[0] : `errors:\n${errors.map((e) => `  ${e}`).join('\n')}`;
      throw new ApiError(500, '', `failed to create typed patch object (${where}): ${text}`);
    }
    const liveObj = live ?? { apiVersion: av, kind: kind.kind };
    const attempt = (force: boolean) => this.applyOnce(kind, liveObj, config, opts, force);
    let obj: any;
    try {
      obj = attempt(opts.force);
    } catch (e) {
      if (!(e instanceof ConflictsError)) {
        if (e instanceof TypedError) throw new ApiError(500, '', `failed to merge config: ${e.message}`);
        throw e;
      }
      // kubectl taking over what it applied client-side (lastappliedmanager.go).
      const allowed =
        opts.manager === 'kubectl' && live ? this.allowedFromLastApplied(kind, live) : undefined;
      const remaining = allowed ? e.conflicts.filter((c) => !allowed.has(c.path)) : e.conflicts;
      if (remaining.length) throw conflictError(remaining);
      obj = attempt(true);
    }
    // The annotation kubectl keeps follows a server-side apply by kubectl (lastappliedupdater.go).
    if (opts.manager === 'kubectl' && obj.metadata?.annotations?.[LAST_APPLIED]) {
      setLastApplied(obj, lastAppliedOf(config));
    }
    return deepEqual(obj, liveObj) ? undefined : obj;
  }

  private applyOnce(
    kind: ServedKind,
    live: any,
    config: any,
    opts: FieldManagerOptions,
    force: boolean,
  ): any {
    const m = safeDecode(live.metadata?.managedFields);
    const liveObj = withoutManaged(live);
    if (m.fields.size === 0 && live.metadata?.uid) {
      // Fields set before any apply are owned by "before-first-apply" (skipnonapplied.go).
      this.trackUpdate(
        kind,
        zeroObject(kind.resource, kind.builtin, apiVersionOf(kind), kind.kind),
        liveObj,
        m,
        'before-first-apply',
        opts.subresource,
      );
    }
    const version = apiVersionOf(kind);
    const id = managerId({ manager: opts.manager, operation: 'Apply', subresource: opts.subresource });
    const updater = new Updater(this.atom(kind), this.ignored(kind, opts.subresource));
    const next = updater.apply(liveObj, config, version, m.fields, id, force) as any;
    stripMeta(m, id);
    if (next !== undefined) m.times.set(id, this.timestamp());
    const obj = structuredClone(next ?? liveObj);
    obj.metadata ??= {};
    const encoded = encode(m);
    if (encoded) obj.metadata.managedFields = encoded;
    else delete obj.metadata.managedFields;
    return obj;
  }

  /** Fields of the last-applied annotation whose live values still equal it (allowedConflictsFromLastApplied). */
  private allowedFromLastApplied(kind: ServedKind, live: any): FieldSet | undefined {
    const raw = live.metadata?.annotations?.[LAST_APPLIED];
    if (!raw) return undefined;
    let last: any;
    try {
      last = JSON.parse(raw);
    } catch {
      return undefined;
    }
    if (!isObj(last) || last.apiVersion !== apiVersionOf(kind)) return undefined;
    const atom = this.atom(kind);
    try {
      const set = toFieldSet(last, atom);
      const c = compare(last, withoutManaged(live), atom);
      return set.difference(c.modified).difference(c.added).difference(c.removed);
    } catch {
      return undefined;
    }
  }
}

/** Go's JSON of an unstructured object: keys sorted, HTML characters escaped, a trailing newline (runtime.Encode). */
function encodeUnstructured(v: unknown): string {
  const sorted = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(sorted)
      : isObj(x)
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sorted(x[k])]),
          )
        : x;
  return `${goJson(sorted(v))}\n`;
}

/** The applied configuration without the annotation itself (buildLastApplied). */
function lastAppliedOf(config: any): string {
  const meta = { ...(config.metadata ?? {}) };
  if (isObj(meta.annotations)) {
    const { [LAST_APPLIED]: _, ...rest } = meta.annotations;
    meta.annotations = rest;
  }
  return encodeUnstructured({ ...config, metadata: meta });
}

/** Sets the annotation unless the annotations would outgrow 256 KiB (lastapplied.go SetLastApplied). */
function setLastApplied(obj: any, value: string): void {
  const annotations = { ...(obj.metadata.annotations ?? {}), [LAST_APPLIED]: value };
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += k.length + String(v).length;
  if (size > 256 * 1024) delete annotations[LAST_APPLIED];
  obj.metadata.annotations = annotations;
}

function safeDecode(entries: unknown): Managed {
  try {
    return decode(entries);
  } catch {
    return decode(undefined);
  }
}

function splitApiVersion(av: unknown): [string, string] {
  if (typeof av !== 'string' || av === '') return ['', ''];
  const i = av.indexOf('/');
  return i < 0 ? ['', av] : [av.slice(0, i), av.slice(i + 1)];
}
