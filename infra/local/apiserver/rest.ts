/**
 * The REST semantics of one resource, independent of HTTP: create, update (main and /status),
 * patch, delete with finalizers and preconditions, get and list. Every method is synchronous:
 * read, decide and commit happen without yielding, which is the server's whole locking story.
 */
import { builtinType } from './builtin-types.ts';
import { type Clock, generateNameSuffix } from './clock.ts';
import { checkApplyPatch, type DecodeContext, decodeBuiltin, type PatchSource } from './field-validation.ts';
import { type FieldRequirement, matchesFields, parseFieldSelector } from './fields.ts';
import { apiVersionOf, type KindRegistry, type ServedKind } from './kinds.ts';
import { type LabelSelector, matchesLabels, parseLabelSelector } from './labels.ts';
import type { Narrowing } from './list-index.ts';
import {
  continueAfter,
  futureRevision,
  type ListRvQuery,
  resolveListRead,
  tooLargeResourceVersion,
  tooOldForList,
} from './list-rv.ts';
import { APPLY_YAML, applyJsonPatch, JSON_PATCH, MERGE, mergePatch, STRATEGIC } from './patch.ts';
import { share } from './share.ts';
import { strategicMergePatch } from './smp.ts';
import { FieldManager, type ManagedFieldsEntry, replacedManagedFields } from './ssa/managed.ts';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  fieldError,
  forbidden,
  internalError,
  invalid,
  notFound,
  unsupportedMediaType,
} from './status.ts';
import { objectKey, type Store } from './store.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** Validates (and may prune/default in place) an object about to be written; throws a 422 ApiError. */
export type Admit = (
  op: Operation,
  kind: ServedKind,
  obj: any,
  old: any | undefined,
  ctx?: AdmitContext,
) => void;

/**
 * How the write was asked for: fieldValidation (how unknown fields are treated; default Warn),
 * the Warning headers to answer, the body's duplicate fields, and the patch being applied.
 */
export interface AdmitContext extends DecodeContext {
  subresource?: string | undefined;
}

export interface ListQuery extends ListRvQuery {
  labelSelector?: string | null | undefined;
  fieldSelector?: string | null | undefined;
}

export interface ListResult {
  items: any[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteBody {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  orphanDependents?: boolean;
  dryRun?: string[];
}

export interface WriteOptions extends AdmitContext {
  dryRun?: boolean;
  fieldManager?: string | undefined;
  /** The request's User-Agent: its first segment names the manager when fieldManager is absent. */
  userAgent?: string | undefined;
  /** The `force` query parameter (apply only); undefined when absent. */
  force?: boolean | undefined;
  /**
   * The body was decoded for this call and nothing else holds it (the HTTP handler's): it is
   * written as it is, not copied first. Callers that pass parts of stored (frozen, shared)
   * objects leave it unset.
   */
  ownBody?: boolean | undefined;
}

/** managedFields already computed for this write (an apply). */
interface InternalWriteOptions extends WriteOptions {
  managedFields?: { value: ManagedFieldsEntry[] | undefined };
  /** A create by server-side apply (the PATCH handler: not refused while a CRD terminates). */
  fromApply?: boolean;
}

/** The finalizer a deleted CRD carries until its instances are gone (apiextensions). */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const isTerminatingCrd = (crd: any): boolean =>
  (crd?.status?.conditions ?? []).some((c: any) => c.type === 'Terminating' && c.status === 'True');

const NS_RESOURCE = '/namespaces';
const CRD_RESOURCE = 'apiextensions.k8s.io/customresourcedefinitions';
// application/apply-patch+cbor is served only behind the CBORServingAndStorage gate (alpha, off in 1.32): 415.
const PATCH_TYPES_CR = [JSON_PATCH, MERGE, APPLY_YAML];
const PATCH_TYPES_BUILTIN = [JSON_PATCH, MERGE, STRATEGIC, APPLY_YAML];

const clone = <T>(v: T): T => structuredClone(v);

/**
 * A mutable copy of a stored object. metadata.managedFields is never changed in place (only
 * replaced), so the frozen list is shared instead of copied: it is often the largest part.
 * `replaced`, a top-level field the caller sets next (a status write's status), is not copied: it
 * keeps its place among the keys with an undefined value.
 */
function cloneStored(o: any, replaced?: 'status'): any {
  const src = replaced !== undefined && o?.[replaced] !== undefined ? { ...o, [replaced]: undefined } : o;
  const mf = src?.metadata?.managedFields;
  if (!mf) return structuredClone(src);
  const { managedFields: _, ...meta } = src.metadata;
  const c = structuredClone({ ...src, metadata: meta });
  c.metadata.managedFields = mf;
  return c;
}

/**
 * Whether anything that counts for metadata.generation differs (all but metadata, and status when
 * it is a subresource). `next` shares unchanged subtrees with `current` (share.ts): a reference
 * comparison per top-level field suffices.
 */
function specChanged(kind: ServedKind, next: any, current: any): boolean {
  const counts = (k: string) => k !== 'metadata' && !(kind.status && k === 'status');
  const a = Object.keys(next).filter(counts);
  const b = Object.keys(current).filter(counts);
  return a.length !== b.length || a.some((k) => next[k] !== current[k]);
}

/** The terms of a list's selectors that the store's indexes can answer (list-index.ts). */
function indexedTerms(labels: LabelSelector, fields: FieldRequirement[]): Narrowing[] {
  const terms: Narrowing[] = [];
  for (const r of labels) {
    if (r.op === 'eq' || r.op === 'in') terms.push({ label: r.key, values: r.values });
    else if (r.op === 'notexists') terms.push({ label: r.key, absent: true });
  }
  for (const f of fields)
    terms.push(f.neq ? { field: f.field, except: f.value } : { field: f.field, value: f.value });
  return terms;
}

export class Rest {
  readonly store: Store;
  readonly kinds: KindRegistry;
  readonly clock: Clock;
  admit: Admit;
  readonly fieldManager: FieldManager;

  constructor(store: Store, kinds: KindRegistry, clock: Clock, admit: Admit) {
    this.store = store;
    this.kinds = kinds;
    this.clock = clock;
    this.admit = admit;
    this.fieldManager = new FieldManager(() => clock.timestamp());
  }

  /** The object as served at `kind`'s version (versions share storage; apiVersion is rewritten). */
  view(kind: ServedKind, obj: any): any {
    const av = apiVersionOf(kind);
    return obj.apiVersion === av ? obj : { ...obj, apiVersion: av };
  }

  get(kind: ServedKind, ns: string | undefined, name: string): any {
    const obj = this.store.get(kind.resource, kind.namespaced ? ns : undefined, name);
    if (!obj) throw notFound(kind, name);
    return obj;
  }

  list(kind: ServedKind, ns: string | undefined, q: ListQuery): ListResult {
    const labels = parseLabelSelector(q.labelSelector);
    const fields = parseFieldSelector(q.fieldSelector, kind);
    const scope = kind.namespaced ? ns : undefined;
    const prefix = scope ? `${scope}/` : '';
    const read = resolveListRead(q, prefix);
    let listRv = this.store.rv;
    let all: Iterable<any>;
    if (read.mode === 'exact') {
      if (read.rv > this.store.rv) throw futureRevision();
      if (read.rv < this.store.compactedRv) throw tooOldForList(read, prefix);
      listRv = read.rv;
      all = this.store.listAt(kind.resource, read.rv, scope, read.from);
    } else {
      if (read.minRv !== undefined && read.minRv > this.store.rv)
        throw tooLargeResourceVersion(read.minRv, this.store.rv);
      // The selector's indexed term that selects the fewest objects narrows the read (a required
      // label value, a label required absent, a field value), read lazily: a paged list stops once
      // it has its page.
      all = this.store.iterate(kind.resource, indexedTerms(labels, fields), scope, read.from);
    }
    const limit =
      q.limit && q.limit > 0 && !(read.mode === 'current' && read.ignoreLimit) ? q.limit : undefined;
    let filtered: any[];
    if (!labels.length && !fields.length) filtered = Array.isArray(all) ? all : [...all];
    else {
      // With selectors no remainingItemCount is given, so a page needs its items and one more (is
      // there a continuation?): the filter stops there instead of testing every object.
      const enough = limit === undefined ? Number.POSITIVE_INFINITY : limit + 1;
      filtered = [];
      for (const o of all) {
        if (!matchesLabels(labels, o.metadata.labels) || !matchesFields(fields, o)) continue;
        filtered.push(o);
        if (filtered.length >= enough) break;
      }
    }
    if (limit === undefined || filtered.length <= limit) {
      return { items: filtered, resourceVersion: String(listRv) };
    }
    const items = filtered.slice(0, limit);
    const last = items[items.length - 1];
    const res: ListResult = {
      items,
      resourceVersion: String(listRv),
      continue: continueAfter(objectKey(last.metadata.namespace, last.metadata.name), prefix, listRv),
    };
    if (!labels.length && !fields.length) res.remainingItemCount = filtered.length - limit;
    return res;
  }

  /** NamespaceLifecycle admission: no content in a missing or terminating namespace. */
  private namespaceGate(kind: ServedKind, ns: string | undefined, name: string): void {
    if (!kind.namespaced) return;
    if (!ns) throw badRequest('the server could not find the requested resource');
    const nsObj = this.store.get(NS_RESOURCE, undefined, ns);
    if (!nsObj) throw notFound({ plural: 'namespaces', group: '' }, ns);
    if (nsObj.metadata.deletionTimestamp) {
      const resource = `${kind.plural}${kind.group ? `.${kind.group}` : ''}`;
      const err = forbidden(
        `${resource}${name ? ` ${JSON.stringify(name)}` : ''} is forbidden: unable to create new content in namespace ${ns} because it is being terminated`,
        kind,
        name || undefined,
      );
      err.body.details!.causes = [
        {
          reason: 'NamespaceTerminating',
          message: `namespace ${ns} is being terminated`,
          field: 'metadata.namespace',
        },
      ];
      throw err;
    }
  }

  create(kind: ServedKind, ns: string | undefined, body: any, opts: InternalWriteOptions = {}): any {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw badRequest('Object is not a valid JSON object');
    validateFieldManager('CreateOptions', opts.fieldManager);
    if (kind.crd && !opts.fromApply && isTerminatingCrd(this.store.get(CRD_RESOURCE, undefined, kind.crd))) {
      // apiextensions-apiserver customresource_handler.go serveResource.
      throw new ApiError(
        405,
        'MethodNotAllowed',
        'create not allowed while custom resource definition is terminating',
        {
          group: kind.group,
          kind: kind.plural,
        },
      );
    }
    const requestedManaged = body.metadata?.managedFields;
    const av = apiVersionOf(kind);
    if (body.kind && body.kind !== kind.kind) {
      throw badRequest(
        `the API version in the data (${body.apiVersion}) does not match the expected API version (${av})`,
      );
    }
    if (body.apiVersion && body.apiVersion !== av) {
      throw badRequest(
        `the API version in the data (${body.apiVersion}) does not match the expected API version (${av})`,
      );
    }
    // apiVersion and kind first, as the real server serializes them.
    const obj = { apiVersion: av, kind: kind.kind, ...(opts.ownBody ? body : clone(body)) };
    obj.apiVersion = av;
    obj.kind = kind.kind;
    if (kind.builtin) decodeBuiltin(kind, obj, opts);
    obj.metadata ??= {};
    const meta = obj.metadata;
    if (kind.namespaced) {
      if (meta.namespace && ns && meta.namespace !== ns) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = ns ?? meta.namespace;
    } else delete meta.namespace;
    this.namespaceGate(kind, meta.namespace, meta.name ?? '');
    if (!meta.name && meta.generateName) {
      for (let i = 0; i < 8; i++) {
        const candidate = `${meta.generateName}${generateNameSuffix(this.clock)}`;
        if (!this.store.get(kind.resource, meta.namespace, candidate)) {
          meta.name = candidate;
          break;
        }
      }
    }
    if (!meta.name) {
      throw invalid(kind, '', [fieldError('Required', 'metadata.name', 'name or generateName is required')]);
    }
    if (meta.resourceVersion) {
      // etcd3's storage refuses it; the real server answers 500 with this text.
      throw internalError('resourceVersion should not be set on objects to be created', false);
    }
    for (const f of [
      'uid',
      'resourceVersion',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'selfLink',
      'managedFields',
      'generation',
      'creationTimestamp',
    ]) {
      delete meta[f];
    }
    meta.uid = this.clock.uid();
    meta.creationTimestamp = this.clock.timestamp();
    if (kind.generation) meta.generation = 1;
    if (kind.status && kind.kind !== 'Node') delete obj.status;
    if (kind.resource === NS_RESOURCE) {
      obj.spec = { finalizers: ['kubernetes'], ...(obj.spec ?? {}) };
      obj.status = { phase: 'Active' };
    }
    this.admit('CREATE', kind, obj, undefined, opts);
    const managed = opts.managedFields
      ? opts.managedFields.value
      : this.fieldManager.update(kind, undefined, obj, requestedManaged, {
          manager: managerOf(opts),
          subresource: undefined,
        });
    if (managed) meta.managedFields = managed;
    if (kind.resource === CRD_RESOURCE) obj.status = crdStatus(obj);
    if (this.store.get(kind.resource, meta.namespace, meta.name)) throw alreadyExists(kind, meta.name);
    if (opts.dryRun) return obj;
    return this.store.put(kind.resource, obj, undefined);
  }

  /** PUT to the object (subresource undefined) or to /status. */
  update(kind: ServedKind, ns: string | undefined, name: string, body: any, opts: WriteOptions = {}): any {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw badRequest('Object is not a valid JSON object');
    const current = this.get(kind, ns, name);
    const meta = body.metadata ?? {};
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    if (kind.namespaced && meta.namespace && meta.namespace !== ns) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (!meta.resourceVersion && !kind.unconditionalUpdate) {
      throw invalid(kind, name, [
        fieldError('Invalid', 'metadata.resourceVersion', 'must be specified for an update', 0),
      ]);
    }
    validateFieldManager('UpdateOptions', opts.fieldManager);
    const proposed = opts.ownBody ? body : clone(body);
    if (kind.builtin) decodeBuiltin(kind, proposed, opts);
    return this.writeUpdate(kind, current, proposed, opts);
  }

  /** Shared tail of update and patch: the proposed object replaces `current` under the usual rules. */
  private writeUpdate(kind: ServedKind, current: any, proposed: any, opts: InternalWriteOptions): any {
    const name = current.metadata.name;
    proposed.metadata ??= {};
    const pmeta = proposed.metadata;
    const requestedManaged = pmeta.managedFields;
    if (pmeta.resourceVersion && pmeta.resourceVersion !== current.metadata.resourceVersion)
      throw conflict(kind, name);
    if (pmeta.uid && pmeta.uid !== current.metadata.uid) {
      throw conflict(
        kind,
        name,
        `Precondition failed: UID in precondition: ${pmeta.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    let next: any;
    if (opts.subresource === 'status') {
      next = cloneStored(current, 'status');
      if (proposed.status === undefined) delete next.status;
      else next.status = proposed.status;
      if (kind.resource === CRD_RESOURCE) {
        // The CRD status strategy resets metadata to the request's own (ResetObjectMetaForStatus(new, new)):
        // its controllers drop their finalizer with a status update.
        for (const f of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
          if (pmeta[f] === undefined) delete next.metadata[f];
          else next.metadata[f] = clone(pmeta[f]);
        }
      }
    } else {
      next = proposed;
      next.apiVersion = current.apiVersion;
      next.kind = kind.kind;
      const m = next.metadata;
      delete m.managedFields;
      delete m.selfLink;
      m.name = current.metadata.name;
      if (current.metadata.namespace) m.namespace = current.metadata.namespace;
      else delete m.namespace;
      m.uid = current.metadata.uid;
      m.creationTimestamp = current.metadata.creationTimestamp;
      m.resourceVersion = current.metadata.resourceVersion;
      for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
        if (current.metadata[f] === undefined) delete m[f];
        else m[f] = current.metadata[f];
      }
      if (kind.status) {
        if (current.status === undefined) delete next.status;
        else next.status = clone(current.status);
      }
      if (current.metadata.deletionTimestamp) {
        const before = new Set<string>(current.metadata.finalizers ?? []);
        const added = ((m.finalizers ?? []) as string[]).filter((f) => !before.has(f));
        if (added.length) {
          throw invalid(kind, name, [
            fieldError(
              'Forbidden',
              'metadata.finalizers',
              `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
            ),
          ]);
        }
      }
      if (Array.isArray(m.finalizers) && m.finalizers.length === 0) delete m.finalizers;
      for (const f of ['labels', 'annotations', 'ownerReferences'] as const) {
        if (m[f] && typeof m[f] === 'object' && Object.keys(m[f]).length === 0) delete m[f];
      }
    }
    this.admit('UPDATE', kind, next, current, opts);
    // Unchanged subtrees are the stored ones: the new version costs only what changed, and the
    // field manager's comparison and the generation check skip them (identical references).
    // managedFields are decided below; meanwhile the live ones stand in, so an unchanged object is shared whole.
    const liveManaged = current.metadata.managedFields;
    if (liveManaged) next.metadata.managedFields = liveManaged;
    else delete next.metadata.managedFields;
    next = share(next, current);
    if (kind.generation && next !== current && specChanged(kind, next, current)) {
      if (Object.isFrozen(next.metadata)) next.metadata = { ...next.metadata };
      next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    }
    const managed = opts.managedFields
      ? opts.managedFields.value
      : this.fieldManager.update(kind, current, next, requestedManaged, {
          manager: managerOf(opts),
          subresource: opts.subresource,
        });
    const mf = managed && liveManaged ? share(managed, liveManaged) : managed;
    if (next === current && mf === liveManaged) return current;
    if (next === current) next = { ...current };
    if (Object.isFrozen(next.metadata)) next.metadata = { ...next.metadata };
    if (mf) next.metadata.managedFields = mf;
    else delete next.metadata.managedFields;
    // A deleted object goes when its last finalizer does (a namespace also waits for spec.finalizers).
    const finalizing =
      next.metadata.finalizers?.length > 0 ||
      (kind.resource === NS_RESOURCE && next.spec?.finalizers?.length > 0);
    if (next.metadata.deletionTimestamp && !finalizing) {
      if (opts.dryRun) return next;
      return this.store.remove(kind.resource, next);
    }
    if (opts.dryRun) return next;
    const stored = this.store.put(kind.resource, next, current);
    replacedManagedFields(liveManaged, stored.metadata.managedFields);
    return stored;
  }

  patch(
    kind: ServedKind,
    ns: string | undefined,
    name: string,
    contentType: string,
    patch: any,
    opts: WriteOptions = {},
  ): { obj: any; created: boolean } {
    const accepted = kind.builtin ? PATCH_TYPES_BUILTIN : PATCH_TYPES_CR;
    if (!accepted.includes(contentType)) throw unsupportedMediaType(contentType, accepted);
    validatePatchOptions(contentType, opts);
    const current = this.store.get(kind.resource, kind.namespaced ? ns : undefined, name);
    if (contentType === APPLY_YAML) return this.apply(kind, ns, name, current, patch, opts);
    if (!current) throw notFound(kind, name);
    if (contentType !== JSON_PATCH && (!patch || typeof patch !== 'object' || Array.isArray(patch))) {
      throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
    }
    const patched = (): any => {
      if (contentType === JSON_PATCH) return applyJsonPatch(current, patch);
      // Patch a copy: merge results share untouched subtrees with their target, and stored objects are immutable.
      if (contentType === MERGE) return mergePatch(cloneStored(current), patch);
      const schema = builtinType(kind.group, kind.version, kind.kind);
      if (!schema) throw unsupportedMediaType(contentType, PATCH_TYPES_CR);
      return strategicMergePatch(current, patch, schema);
    };
    const next = patched();
    if (!next || typeof next !== 'object')
      throw badRequest('the patch produced an object that is not a JSON object');
    const source: PatchSource = {
      strategic: contentType === STRATEGIC,
      patch,
      patched: () => JSON.stringify(patched()),
    };
    const o: WriteOptions = { ...opts, patch: source };
    if (kind.builtin) decodeBuiltin(kind, next, o);
    next.metadata ??= {};
    // Without a resourceVersion in the patch, a patch applies to whatever is current (no conflict).
    if (next.metadata.resourceVersion === undefined)
      next.metadata.resourceVersion = current.metadata.resourceVersion;
    if (next.metadata.name !== undefined && next.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    return { obj: this.writeUpdate(kind, current, next, o), created: false };
  }

  /** Server-side apply with field ownership (see ssa/managed.ts); creates the object when missing. */
  private apply(
    kind: ServedKind,
    ns: string | undefined,
    name: string,
    current: any,
    patch: any,
    opts: WriteOptions,
  ) {
    if (!patch || typeof patch !== 'object' || Array.isArray(patch))
      throw badRequest(
        'error decoding patch: json: cannot unmarshal into Go value of type map[string]interface {}',
      );
    if (patch.metadata?.name !== undefined && patch.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${patch.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    if (!current && opts.subresource) throw notFound(kind, name);
    // Fields the built-in kind's upstream schema lacks: refused before ownership is computed.
    if (kind.builtin) checkApplyPatch(kind, ns, name, patch);
    const config = clone(patch);
    const next = this.fieldManager.apply(kind, current, config, {
      manager: opts.fieldManager ?? '',
      subresource: opts.subresource,
      force: opts.force === true,
    });
    if (!current) {
      const body = next;
      body.metadata = { ...(body.metadata ?? {}), name };
      const managedFields = { value: body.metadata.managedFields };
      const obj = this.create(kind, ns, body, { ...opts, managedFields, fromApply: true, ownBody: false });
      return { obj, created: true };
    }
    if (next === undefined) return { obj: current, created: false };
    next.metadata.resourceVersion = patch.metadata?.resourceVersion ?? current.metadata.resourceVersion;
    const managedFields = { value: next.metadata.managedFields };
    return { obj: this.writeUpdate(kind, current, next, { ...opts, managedFields }), created: false };
  }

  delete(
    kind: ServedKind,
    ns: string | undefined,
    name: string,
    body: DeleteBody = {},
    opts: WriteOptions = {},
  ): any {
    const current = this.get(kind, ns, name);
    const pre = body.preconditions ?? {};
    if (pre.uid && pre.uid !== current.metadata.uid) {
      throw conflict(
        kind,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (pre.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        kind,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const policy = body.propagationPolicy ?? (body.orphanDependents === true ? 'Orphan' : 'Background');
    if (!['Background', 'Foreground', 'Orphan'].includes(policy)) {
      throw invalid({ kind: 'DeleteOptions', group: '' }, '', [
        fieldError(
          'NotSupported',
          'propagationPolicy',
          'supported values: "Foreground", "Background", "Orphan", "nil"',
          policy,
        ),
      ]);
    }
    const finalizers: string[] = [...(current.metadata.finalizers ?? [])];
    const extra = policy === 'Foreground' ? 'foregroundDeletion' : policy === 'Orphan' ? 'orphan' : undefined;
    const hasDependents = this.store.dependentsOf(current.metadata.uid).length > 0;
    if (
      extra &&
      !finalizers.includes(extra) &&
      (hasDependents || finalizers.length > 0 || extra === 'foregroundDeletion')
    ) {
      finalizers.push(extra);
    }
    if (kind.resource === CRD_RESOURCE && !current.metadata.deletionTimestamp) {
      // apiextensions registry customresourcedefinition/etcd.go Delete: the first delete only
      // marks the CRD; its finalizer controller removes the instances, then the finalizer.
      const next = cloneStored(current);
      next.metadata.deletionTimestamp = this.clock.timestamp();
      next.metadata.finalizers = [...new Set([...(next.metadata.finalizers ?? []), CRD_CLEANUP_FINALIZER])];
      next.status = setCondition(next.status ?? {}, this.clock.timestamp(), {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      });
      return opts.dryRun ? next : this.store.put(kind.resource, next, current);
    }
    if (kind.resource === NS_RESOURCE && !current.metadata.deletionTimestamp) {
      // Namespaces always terminate through their spec finalizer: contents go first.
      const next = cloneStored(current);
      next.metadata.deletionTimestamp = this.clock.timestamp();
      next.metadata.deletionGracePeriodSeconds = 0;
      if (finalizers.length) next.metadata.finalizers = finalizers;
      next.status = { ...(next.status ?? {}), phase: 'Terminating' };
      return opts.dryRun ? next : this.store.put(kind.resource, next, current);
    }
    if (current.metadata.deletionTimestamp) {
      if (finalizers.length === (current.metadata.finalizers ?? []).length || opts.dryRun) return current;
      const next = cloneStored(current);
      next.metadata.finalizers = finalizers;
      return this.store.put(kind.resource, next, current);
    }
    if (finalizers.length === 0) {
      return opts.dryRun ? current : this.store.remove(kind.resource, current);
    }
    const next = cloneStored(current);
    next.metadata.finalizers = finalizers;
    next.metadata.deletionTimestamp = this.clock.timestamp();
    next.metadata.deletionGracePeriodSeconds = 0;
    if (kind.generation) next.metadata.generation = (current.metadata.generation ?? 0) + 1;
    return opts.dryRun ? next : this.store.put(kind.resource, next, current);
  }

  /** Removes finalizer `f` from an object as a controller would (used by the garbage collector). */
  dropFinalizer(kind: ServedKind, obj: any, f: string): void {
    const fins: string[] = obj.metadata.finalizers ?? [];
    if (!fins.includes(f)) return;
    const next = cloneStored(obj);
    next.metadata.finalizers = fins.filter((x) => x !== f);
    this.writeUpdate(kind, obj, next, { fieldManager: CONTROLLER_MANAGER });
  }
}

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const isPrint = (ch: string) => ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);

/** The manager of the built-in controllers' writes (their User-Agent is kube-controller-manager/...). */
export const CONTROLLER_MANAGER = 'kube-controller-manager';

/** The manager of a write: fieldManager, else the User-Agent up to its first "/" (handlers/create.go managerOrUserAgent). */
export function managerOf(opts: WriteOptions): string {
  if (opts.fieldManager) return opts.fieldManager;
  let out = '';
  for (const ch of (opts.userAgent ?? '').split('/')[0]!) {
    if (!isPrint(ch)) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}

/** ValidateFieldManager: at most 128 bytes, printable characters only (422 on the options kind). */
function validateFieldManager(optionsKind: string, fieldManager: string | undefined): void {
  if (!fieldManager) return;
  const causes = [];
  if (Buffer.byteLength(fieldManager) > 128) {
    causes.push(fieldError('TooLong', 'fieldManager', 'may not be more than 128 bytes'));
  }
  let i = 0;
  for (const ch of fieldManager) {
    if (!isPrint(ch)) {
      const cp = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      causes.push(
        fieldError('Invalid', 'fieldManager', `invalid character U+${cp} (at position ${i})`, fieldManager),
      );
    }
    i += Buffer.byteLength(ch);
  }
  if (causes.length) throw invalid({ kind: optionsKind, group: 'meta.k8s.io' }, '', causes);
}

/** ValidatePatchOptions: force only with apply, fieldManager required with apply. */
function validatePatchOptions(contentType: string, opts: WriteOptions): void {
  const isApply = contentType === APPLY_YAML;
  const causes = [];
  if (!isApply && opts.force !== undefined) {
    causes.push(fieldError('Forbidden', 'force', 'may not be specified for non-apply patch'));
  }
  if (isApply && !opts.fieldManager) {
    causes.push(fieldError('Required', 'fieldManager', 'is required for apply patch'));
  }
  if (causes.length) throw invalid({ kind: 'PatchOptions', group: 'meta.k8s.io' }, '', causes);
  validateFieldManager('PatchOptions', opts.fieldManager);
}

/**
 * Sets a condition as apiextensions' SetCRDCondition / the namespace controller do: an existing
 * one of that type keeps its lastTransitionTime unless its status changes.
 */
export function setCondition(
  status: any,
  now: string,
  c: { type: string; status: string; reason: string; message: string },
): any {
  const conditions: any[] = [...(status.conditions ?? [])];
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i < 0)
    conditions.push({
      type: c.type,
      status: c.status,
      lastTransitionTime: now,
      reason: c.reason,
      message: c.message,
    });
  else {
    const old = conditions[i];
    conditions[i] = {
      ...old,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: old.status === c.status ? old.lastTransitionTime : now,
    };
  }
  return { ...status, conditions };
}

function crdStatus(crd: any): any {
  const names = crd.spec?.names ?? {};
  const now = crd.metadata.creationTimestamp;
  return {
    acceptedNames: {
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      plural: names.plural,
      singular: names.singular ?? String(names.kind ?? '').toLowerCase(),
      ...(names.shortNames ? { shortNames: names.shortNames } : {}),
      ...(names.categories ? { categories: names.categories } : {}),
    },
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'True',
        lastTransitionTime: now,
        reason: 'NoConflicts',
        message: 'no conflicts found',
      },
      {
        type: 'Established',
        status: 'True',
        lastTransitionTime: now,
        reason: 'InitialNamesAccepted',
        message: 'the initial names have been accepted',
      },
    ],
    storedVersions: (crd.spec?.versions ?? []).filter((v: any) => v.storage).map((v: any) => v.name),
  };
}

export { ApiError };
