/**
 * meta.k8s.io/v1 Table output for `kubectl get`: the CRD's additionalPrinterColumns (Name and
 * Age when it has none), or the usual columns of a built-in kind.
 */
import { evalJsonPath } from './jsonpath.ts';
import type { PrinterColumn, ServedKind } from './kinds.ts';

/** Go's duration.HumanDuration, as `kubectl get` ages print. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 0) return '<invalid>';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(s / 3600);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (d < 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

const age = (ts: unknown): string =>
  typeof ts === 'string' ? humanDuration(Date.now() - Date.parse(ts)) : '<unknown>';

interface Column {
  def: { name: string; type: string; format: string; description: string; priority: number };
  cell(obj: any): unknown;
}

const col = (name: string, type: string, cell: (o: any) => unknown, priority = 0, format = ''): Column => ({
  def: { name, type, format, description: name, priority },
  cell,
});

const NAME = col('Name', 'string', (o) => o.metadata?.name, 0, 'name');
const AGE = col('Age', 'string', (o) => age(o.metadata?.creationTimestamp));
const count = (m: unknown) => (m && typeof m === 'object' ? Object.keys(m).length : 0);

const BUILTIN_COLUMNS: Record<string, Column[]> = {
  '/namespaces': [NAME, col('Status', 'string', (o) => o.status?.phase ?? ''), AGE],
  '/secrets': [
    NAME,
    col('Type', 'string', (o) => o.type ?? 'Opaque'),
    col('Data', 'integer', (o) => count(o.data)),
    AGE,
  ],
  '/configmaps': [NAME, col('Data', 'integer', (o) => count(o.data) + count(o.binaryData)), AGE],
  '/serviceaccounts': [NAME, col('Secrets', 'integer', (o) => (o.secrets ?? []).length), AGE],
  '/nodes': [
    NAME,
    col('Status', 'string', (o) => {
      const c = (o.status?.conditions ?? []).find((x: any) => x.type === 'Ready');
      const s = c
        ? c.status === 'True'
          ? 'Ready'
          : c.status === 'False'
            ? 'NotReady'
            : 'Unknown'
        : 'Unknown';
      return o.spec?.unschedulable ? `${s},SchedulingDisabled` : s;
    }),
    col('Roles', 'string', (o) => {
      const roles = Object.keys(o.metadata?.labels ?? {})
        .filter((k) => k.startsWith('node-role.kubernetes.io/'))
        .map((k) => k.slice('node-role.kubernetes.io/'.length));
      return roles.length ? roles.join(',') : '<none>';
    }),
    AGE,
    col('Version', 'string', (o) => o.status?.nodeInfo?.kubeletVersion ?? ''),
  ],
  '/events': [
    col('Last Seen', 'string', (o) => age(o.lastTimestamp ?? o.eventTime ?? o.metadata?.creationTimestamp)),
    col('Type', 'string', (o) => o.type ?? ''),
    col('Reason', 'string', (o) => o.reason ?? ''),
    col(
      'Object',
      'string',
      (o) => `${String(o.involvedObject?.kind ?? '').toLowerCase()}/${o.involvedObject?.name ?? ''}`,
    ),
    col('Message', 'string', (o) => o.message ?? ''),
  ],
  'coordination.k8s.io/leases': [NAME, col('Holder', 'string', (o) => o.spec?.holderIdentity ?? ''), AGE],
  'apiextensions.k8s.io/customresourcedefinitions': [
    NAME,
    col('Created At', 'date', (o) => o.metadata?.creationTimestamp),
  ],
  'rbac.authorization.k8s.io/roles': [NAME, col('Created At', 'date', (o) => o.metadata?.creationTimestamp)],
  'rbac.authorization.k8s.io/clusterroles': [
    NAME,
    col('Created At', 'date', (o) => o.metadata?.creationTimestamp),
  ],
  'rbac.authorization.k8s.io/rolebindings': [
    NAME,
    col('Role', 'string', (o) => `${o.roleRef?.kind}/${o.roleRef?.name}`),
    AGE,
  ],
  'rbac.authorization.k8s.io/clusterrolebindings': [
    NAME,
    col('Role', 'string', (o) => `${o.roleRef?.kind}/${o.roleRef?.name}`),
    AGE,
  ],
};

function printerColumn(c: PrinterColumn): Column {
  return col(
    c.name,
    c.type,
    (o) => {
      let vals: unknown[];
      try {
        vals = evalJsonPath(c.jsonPath, o);
      } catch {
        return null;
      }
      if (vals.length === 0) return null;
      const v = vals[0];
      if (c.type === 'date') return age(v);
      if (c.type === 'integer' || c.type === 'number' || c.type === 'boolean') return v;
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    },
    c.priority ?? 0,
    c.format ?? '',
  );
}

const columnCache = new WeakMap<ServedKind, Column[]>();

export function columnsFor(kind: ServedKind): Column[] {
  let cols = columnCache.get(kind);
  if (!cols) {
    cols = kind.builtin
      ? (BUILTIN_COLUMNS[kind.resource] ?? [NAME, AGE])
      : [NAME, ...(kind.columns.length ? kind.columns.map(printerColumn) : [AGE])];
    columnCache.set(kind, cols);
  }
  return cols;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function rowObject(obj: any, include: IncludeObject): any {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function tableRow(kind: ServedKind, obj: any, include: IncludeObject = 'Metadata') {
  const row: any = { cells: columnsFor(kind).map((c) => c.cell(obj)) };
  const o = rowObject(obj, include);
  if (o) row.object = o;
  return row;
}

export function toTable(
  kind: ServedKind,
  objs: any[],
  meta: Record<string, unknown>,
  include: IncludeObject = 'Metadata',
  withColumns = true,
) {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: meta,
    ...(withColumns ? { columnDefinitions: columnsFor(kind).map((c) => c.def) } : { columnDefinitions: [] }),
    rows: objs.map((o) => tableRow(kind, o, include)),
  };
}
