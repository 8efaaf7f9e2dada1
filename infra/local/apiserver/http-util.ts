/** Small HTTP helpers of the server: JSON responses, Status errors, bodies, media types. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { APPLY_YAML } from './patch.ts';
import { decodeProtobuf, PROTOBUF } from './protobuf.ts';
import { ApiError, badRequest, internalError, PlainTextError } from './status.ts';

const MAX_BODY = 3 * 1024 * 1024;

/**
 * Above this many characters a response is written as a Buffer of its bytes. A string goes
 * through Node's socket write as the header prepended to it (a concatenation V8 flattens: another
 * copy of the text on the heap) into a native buffer sized for the worst case (3 bytes a
 * character); a Buffer is the text's bytes once, written as they are. Small answers stay strings
 * (Node writes those from a stack buffer).
 */
const BUFFER_ABOVE = 64 * 1024;

export function send(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const data = text.length > BUFFER_ABOVE ? Buffer.from(text, 'utf8') : text;
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': typeof data === 'string' ? Buffer.byteLength(data) : data.length,
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(data);
}

export function sendError(res: ServerResponse, e: unknown): number {
  if (e instanceof PlainTextError) {
    res.writeHead(e.code, {
      'Content-Type': 'text/plain; charset=utf-8',
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(`${e.message}\n`);
    return e.code;
  }
  const err = e instanceof ApiError ? e : internalError(String((e as Error)?.message ?? e));
  if (!(e instanceof ApiError))
    process.stderr.write(`apiserver: internal error: ${(e as Error)?.stack ?? e}\n`);
  send(res, err.code, err.body, err.headers);
  return err.code;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY)
      throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The body's text, for the media types decoded from text (JSON, YAML); undefined for protobuf. */
export const bodyText = (raw: Buffer, contentType: string): string | undefined =>
  contentType === PROTOBUF ? undefined : raw.toString('utf8');

/** Decodes a body; `text` is bodyText's (made once: the duplicate-field check reads it too). */
export function decode(raw: Buffer, contentType: string, text = bodyText(raw, contentType)): any {
  if (text === undefined) return raw.length ? decodeProtobuf(raw) : undefined;
  if (!text.trim()) return undefined;
  try {
    if (contentType === APPLY_YAML || contentType.includes('yaml')) return parseYaml(text);
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`error decoding request body: ${(e as Error).message}`);
  }
}

export const mediaType = (h: string | undefined): string =>
  (h ?? 'application/json').split(';')[0]!.trim().toLowerCase();

/**
 * A boolean query parameter as the server's parameter codec reads it
 * (k8s.io/apimachinery pkg/runtime/conversion.go Convert_Slice_string_To_bool): only "0" and
 * any case of "false" are false; every other value ("True", "t", "yes", "") is true.
 */
export function boolParam(q: URLSearchParams, k: string): boolean | undefined {
  const v = q.get(k);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}
