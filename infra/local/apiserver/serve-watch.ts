/** Serves one watch request: a chunked stream of newline-delimited JSON events (see watch.ts). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseFieldSelector } from './fields.ts';
import { boolParam } from './http-util.ts';
import type { ServedKind } from './kinds.ts';
import { parseLabelSelector } from './labels.ts';
import { asPartialObjectMetadata } from './negotiate.ts';
import type { ServerDeps } from './server.ts';
import type { ApiError } from './status.ts';
import { type IncludeObject, toTable } from './table.ts';
import { WatchStream } from './watch.ts';

export function serveWatch(
  req: IncomingMessage,
  res: ServerResponse,
  deps: ServerDeps,
  kind: ServedKind,
  ns: string | undefined,
  q: URLSearchParams,
  /** Each event's object as a Table row, or as PartialObjectMetadata; absent: as stored. */
  transform: { table: IncludeObject } | { metadata: string } | undefined,
  dropAfter: number | undefined,
  failWith: ApiError | undefined,
): void {
  const labels = parseLabelSelector(q.get('labelSelector'));
  const fields = parseFieldSelector(q.get('fieldSelector'), kind);
  const timeout = q.get('timeoutSeconds');
  const sie = boolParam(q, 'sendInitialEvents');
  req.socket.setNoDelay(true);
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();
  let first = true;
  const render =
    transform === undefined
      ? undefined
      : 'metadata' in transform
        ? (obj: any) => asPartialObjectMetadata(deps.rest.view(kind, obj), transform.metadata)
        : (obj: any) => {
            const t: any = toTable(
              kind,
              [deps.rest.view(kind, obj)],
              { resourceVersion: obj.metadata.resourceVersion },
              transform.table,
              first,
            );
            first = false;
            return t;
          };
  const stream = new WatchStream(
    deps.rest.store,
    {
      kind,
      namespace: ns,
      labels,
      fields,
      resourceVersion: q.get('resourceVersion') ?? undefined,
      sendInitialEvents: sie,
      allowBookmarks: boolParam(q, 'allowWatchBookmarks') === true,
      timeoutSeconds: timeout ? Number(timeout) : undefined,
      render,
      bookmarkAs:
        transform && 'metadata' in transform
          ? { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${transform.metadata}` }
          : undefined,
    },
    {
      write: (line) => res.write(line),
      onDrain: (cb) => res.once('drain', cb),
      end: () => res.end(),
    },
    { ...deps.watchLimits, dropAfterEvents: dropAfter },
    deps.watchLines,
  );
  deps.watches.add(stream);
  stream.onClose = () => {
    deps.watches.delete(stream);
  };
  req.on('close', () => stream.close());
  res.on('close', () => stream.close());
  if (failWith) stream.fail(failWith);
  else stream.start();
}
