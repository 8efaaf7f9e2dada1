/**
 * Strategic merge patch for built-in kinds, driven by each field's patch strategy and merge key
 * from upstream's OpenAPI data (builtin-types.ts), with the semantics of
 * k8s.io/apimachinery pkg/util/strategicpatch (StrategicMergeMapPatch, as the patch handler
 * applies it: parallel delete lists merged, unmatched nulls ignored):
 * - maps merge key by key; `$patch: replace` replaces, `$patch: delete` empties; `$retainKeys`
 *   clears the keys not listed;
 * - lists whose field has strategy `merge` merge: by the merge key for objects (with `$patch:
 *   delete|replace` items), as a set for scalars (with `$deleteFromPrimitiveList/<field>`), and are
 *   ordered as the patch and `$setElementOrder/<field>` say; every other list is replaced
 *   (`spec.taints` and RoleBinding `subjects` are atomic, so removing an item removes it);
 * - errors answer as the server's interpretStrategicMergePatchError does (400, 422, or the raw
 *   error as a 500, e.g. an object-valued field the struct does not have).
 */
import type { FieldInfo, GoType } from './builtin-types.ts';
import { goFormat } from './decode.ts';
import { ApiError, badRequest, internalError } from './status.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_LIST = '$deleteFromPrimitiveList/';
const ORDER = '$setElementOrder/';

const ERR_RETAIN_KEYS = 'invalid patch format of retainKeys';
const ERR_ORDER = 'invalid patch format of setElementOrder list';

/** A raw Go error reaching the handler: 500 with the error's text, no reason. */
const rawError = (message: string): ApiError => internalError(message, false);

/** The Go kind name of a value, as reflect prints it in errors. */
function goKind(t: GoType): string {
  if (t.t === 'struct') return 'struct';
  if (t.t === 'map') return 'map';
  if (t.t === 'slice' || t.t === 'bytes') return 'slice';
  if (t.t === 'raw') return t.go.startsWith('map') ? 'map' : t.go.includes('.') ? 'struct' : 'interface';
  return t.t === 'time' || t.t === 'intOrString' || t.t === 'quantity' ? 'struct' : t.t;
}

/** forkedjson.LookupPatchMetadataForStruct: the field's type and patch metadata, or the server's error. */
function lookup(schema: GoType, key: string): FieldInfo {
  if (schema.t !== 'struct') {
    if (schema.t === 'raw' && schema.go.includes('.') && !schema.go.startsWith('map'))
      throw rawError(
        `unable to find api field in struct ${schema.go.split('.')[1]} for the json field ${JSON.stringify(key)}`,
      );
    throw rawError(`merging an object in json but data type is not struct, instead is: ${goKind(schema)}`);
  }
  const f = schema.fields.get(key);
  if (!f)
    throw rawError(
      `unable to find api field in struct ${schema.name} for the json field ${JSON.stringify(key)}`,
    );
  return f;
}

/** LookupPatchMetadataForSlice: the element type of a list field. */
function lookupSlice(schema: GoType, key: string): { elem: GoType; strategy: string; mergeKey: string } {
  const f = lookup(schema, key);
  if (f.type.t !== 'slice') throw rawError(`expected slice or array type, but got: ${goKind(f.type)}`);
  return { elem: f.type.elem, strategy: strategyOf(f), mergeKey: f.mergeKey ?? '' };
}

/** extractRetainKeysPatchStrategy: the strategy besides retainKeys. */
function strategyOf(f: FieldInfo): string {
  const s = f.strategy.filter((x) => x !== 'retainKeys');
  return s[0] ?? '';
}

/** Drops `$patch`-marked maps (and the list items that are), recursively; undefined when `v` itself is one. */
function removeDirectives(v: unknown): unknown {
  if (isObj(v)) {
    if (PATCH in v) return undefined;
    for (const k of Object.keys(v)) {
      const r = removeDirectives(v[k]);
      if (r === undefined) delete v[k];
      else v[k] = r;
    }
    return v;
  }
  if (Array.isArray(v)) return v.map(removeDirectives).filter((x) => x !== undefined);
  return v;
}

function discardNulls(v: unknown): void {
  if (isObj(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNulls(v[k]);
    }
  } else if (Array.isArray(v)) for (const x of v) discardNulls(x);
}

const jsonType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** The item's identity in a list: its merge key value (maps) or itself (scalars). */
const idOf = (item: unknown, mergeKey: string): unknown =>
  mergeKey ? (isObj(item) ? item[mergeKey] : undefined) : item;
const indexIn = (list: unknown[], item: unknown, mergeKey: string): number => {
  const id = idOf(item, mergeKey);
  return list.findIndex((x) => idOf(x, mergeKey) === id);
};

function requireMergeKey(items: unknown[], mergeKey: string): void {
  for (const it of items) {
    if (!isObj(it)) throw rawError(`expected a map[string]interface {}, but received a ${jsonType(it)}`);
    if (!(mergeKey in it))
      throw rawError(`map: ${goFormat(it)} does not contain declared merge key: ${mergeKey}`);
  }
}

/** normalizeSliceOrder: `toSort` ordered as in `order` (delete directives last). */
function sortByOrder(toSort: unknown[], order: unknown[], mergeKey: string, maps: boolean): unknown[] {
  let rest = toSort;
  let deletes: unknown[] = [];
  if (maps) {
    requireMergeKey(toSort, mergeKey);
    requireMergeKey(order, mergeKey);
    rest = toSort.filter((x) => (x as Obj)[PATCH] !== 'delete');
    deletes = toSort.filter((x) => (x as Obj)[PATCH] === 'delete');
  }
  const keyed = rest.map((x, i) => ({ x, i, at: indexIn(order, x, mergeKey) }));
  keyed.sort((a, b) => (a.at >= 0 && b.at >= 0 && a.at !== b.at ? a.at - b.at : a.i - b.i));
  return [...keyed.map((k) => k.x), ...deletes];
}

/**
 * normalizeElementOrder + mergeSortedSlice: patch items in the patch's order, server-only items
 * in the live order, interleaved by their live positions.
 */
function normalizeOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  maps: boolean,
): unknown[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, maps);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, maps);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey);
      const ri = indexIn(serverOrder, right[j], mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/** Items of `merged` present in `by` (by merge key or value), and the others. */
function partition(merged: unknown[], by: unknown[], mergeKey: string): [unknown[], unknown[]] {
  if (mergeKey) requireMergeKey(merged, mergeKey);
  const inBy = (x: unknown) => by.some((b) => idOf(b, mergeKey) === idOf(x, mergeKey));
  return [merged.filter(inBy), merged.filter((x) => !inBy(x))];
}

/** deduplicateScalars, including its element order (the last element moves into a removed slot). */
function dedupe(s: unknown[]): unknown[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

function mergeSlice(
  original: unknown[],
  patch: unknown[],
  elem: GoType,
  mergeKey: string,
  isDeleteList: boolean,
): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const all = [...original, ...patch];
  const kinds = new Set(all.map(jsonType));
  if (kinds.has('array')) throw new ApiError(422, '', 'lists of lists are not supported', {});
  if (kinds.size > 1) throw rawError(`list element types are not identical: ${goFormat([original, patch])}`);
  const maps = kinds.has('object');
  let merged: unknown[];
  let base = original;
  let items = patch;
  if (!maps) {
    if (isDeleteList) return original.filter((x) => !patch.includes(x));
    merged = dedupe(all);
  } else {
    if (!mergeKey) throw rawError('cannot merge lists without merge key for struct');
    let replace = false;
    items = [];
    for (const p of patch as Obj[]) {
      const directive = p[PATCH];
      if (directive === undefined) items.push(p);
      else if (directive === 'delete') {
        if (!(mergeKey in p))
          throw rawError(`map: ${goFormat(p)} does not contain declared merge key: ${mergeKey}`);
        base = base.filter((x) => !(isObj(x) && x[mergeKey] === p[mergeKey]));
      } else if (directive === 'replace') replace = true;
      else if (directive === 'merge') throw rawError('merging lists cannot yet be specified in the patch');
      else throw rawError(`unknown patch type: ${String(directive)} in map: ${goFormat(p)}`);
    }
    if (replace) {
      base = items;
      items = [];
    }
    merged = [...base];
    for (const p of items as Obj[]) {
      if (!(mergeKey in p))
        throw rawError(`map: ${goFormat(p)} does not contain declared merge key: ${mergeKey}`);
      const at = merged.findIndex((x) => {
        if (!isObj(x)) throw rawError(`value for key ${merged.indexOf(x)} is not a map`);
        return x[mergeKey] === p[mergeKey];
      });
      if (at >= 0) merged[at] = mergeMap(merged[at] as Obj, p, elem);
      else merged.push(p);
    }
  }
  const [patchItems, serverOnly] = partition(merged, items, mergeKey);
  return normalizeOrder(patchItems, serverOnly, items, base, mergeKey, maps);
}

function mergeSliceField(
  original: unknown[],
  patch: unknown[],
  strategy: string,
  elem: GoType,
  mergeKey: string,
  isDeleteList: boolean,
): unknown[] {
  return strategy === 'merge' || isDeleteList
    ? mergeSlice(original, patch, elem, mergeKey, isDeleteList)
    : patch;
}

/** applyRetainKeysDirective: clears the keys of `original` the directive does not list. */
function retainKeys(original: Obj, patch: Obj): void {
  if (!(RETAIN_KEYS in patch)) return;
  const keep = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(keep)) throw badRequest(ERR_RETAIN_KEYS);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_LIST) || k.startsWith(ORDER)) continue;
    if (!keep.includes(k)) throw badRequest(ERR_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!keep.includes(k)) delete original[k];
}

/** validatePatchWithSetOrderList: the patch's items appear in the order list, in that order. */
function checkOrderList(patchList: unknown, order: unknown[], mergeKey: string): void {
  if (!Array.isArray(patchList) || order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? patchList.filter((x) => !(isObj(x) && x[PATCH] === 'delete')) : patchList;
  let pi = 0;
  let oi = 0;
  while (pi < items.length && oi < order.length) {
    if (isObj(items[pi]) && PATCH in (items[pi] as Obj)) {
      pi++;
      continue;
    }
    if (idOf(items[pi], mergeKey) === idOf(order[oi], mergeKey)) pi++;
    oi++;
  }
  if (pi < items.length)
    throw rawError(
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${ORDER.slice(0, -1)} list:\n${goFormat(order)}\n`,
    );
}

/** mergePatchIntoOriginal: the `$setElementOrder/<field>` directives and the lists they order. */
function applyElementOrder(original: Obj, patch: Obj, schema: GoType): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(ORDER)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw rawError(`expected a []interface {}, but received a ${jsonType(order)}`);
    const field = key.slice(ORDER.length);
    if (!field) throw badRequest(ERR_ORDER);
    const hasOriginal = field in original;
    const hasPatch = field in patch;
    const originalList = hasOriginal ? original[field] : undefined;
    const patchList = hasPatch ? patch[field] : undefined;
    if (hasOriginal && !Array.isArray(originalList))
      throw rawError(`expected a []interface {}, but received a ${jsonType(originalList)}`);
    if (hasPatch && !Array.isArray(patchList))
      throw rawError(`expected a []interface {}, but received a ${jsonType(patchList)}`);
    const { elem, strategy, mergeKey } = lookupSlice(schema, field);
    if (hasPatch) {
      if (!Array.isArray(patchList)) throw badRequest(ERR_ORDER);
      checkOrderList(patchList, order, mergeKey);
    }
    let merged: unknown[];
    if (hasOriginal && !hasPatch) merged = originalList as unknown[];
    else if (!hasOriginal && hasPatch) merged = removeDirectives(patchList) as unknown[];
    else if (hasOriginal && hasPatch)
      merged = mergeSliceField(
        originalList as unknown[],
        patchList as unknown[],
        strategy,
        elem,
        mergeKey,
        false,
      );
    else continue;
    const [patchItems, serverOnly] = partition(merged, order, mergeKey);
    const maps = [...((originalList as unknown[]) ?? []), ...((patchList as unknown[]) ?? [])].some(isObj);
    original[field] = normalizeOrder(
      patchItems,
      serverOnly,
      order,
      (originalList as unknown[]) ?? [],
      mergeKey,
      maps,
    );
    delete patch[field];
  }
}

/** mergeMap: `patch` merged into `original` (both owned by the caller; both modified). */
export function mergeMap(original: Obj | undefined, patch: Obj, schema: GoType): Obj {
  if (PATCH in patch) {
    const d = patch[PATCH];
    if (d === 'replace') {
      delete patch[PATCH];
      return patch;
    }
    if (d === 'delete') return {};
    throw rawError(`unknown patch type: ${String(d)} in map: ${goFormat(patch)}`);
  }
  const out = original ?? {};
  retainKeys(out, patch);
  applyElementOrder(out, patch, schema);
  for (const rawKey of Object.keys(patch)) {
    let k = rawKey;
    const patchV = patch[rawKey];
    const isDeleteList = rawKey.startsWith(DELETE_LIST);
    if (isDeleteList) {
      k = rawKey.slice(DELETE_LIST.length);
      if (!k) throw badRequest('invalid patch format of primitive list');
    }
    if (patchV === null) {
      delete out[k];
      continue;
    }
    const origV = out[k];
    if (!(k in out) || jsonType(origV) !== jsonType(patchV)) {
      // Nothing to merge with: the patch's value, without its nulls and directives.
      if (!isDeleteList) {
        discardNulls(patchV);
        setOrDelete(out, k, removeDirectives(patchV));
      }
      continue;
    }
    if (isObj(origV)) {
      const f = lookup(schema, k);
      out[k] = strategyOf(f) === 'replace' ? patchV : mergeMap(origV, patchV as Obj, f.type);
    } else if (Array.isArray(origV)) {
      const { elem, strategy, mergeKey } = lookupSlice(schema, k);
      out[k] = mergeSliceField(origV, patchV as unknown[], strategy, elem, mergeKey, isDeleteList);
    } else setOrDelete(out, k, removeDirectives(patchV));
  }
  return out;
}

function setOrDelete(obj: Obj, k: string, v: unknown): void {
  if (v === undefined) delete obj[k];
  else obj[k] = v;
}

/** Applies a strategic merge patch to a copy of `original` (the patch is copied too: merging consumes it). */
export function strategicMergePatch(original: Obj, patch: Obj, schema: GoType): Obj {
  return mergeMap(structuredClone(original), structuredClone(patch), schema);
}
