/**
 * Our Logger over Powertools for AWS Lambda's Logger: the cores keep one logging interface
 * (`ctx.log`), and on Lambda each line is Powertools' structured JSON (level, message, timestamp,
 * service, the invocation's function_name / function_request_id / cold_start, xray_trace_id) with
 * our fields beside them. Fields are redacted as by createLogger. A field named like one of the
 * keys Powertools reserves (which it would drop) gets the suffix `_field`.
 */
import type { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { type Logger, redactFields } from './logger.ts';

const RESERVED: ReadonlySet<string> = new Set(['level', 'message', 'sampling_rate', 'service', 'timestamp']);

function attributes(
  base: Record<string, unknown>,
  fields?: Record<string, unknown>,
): Record<string, unknown> {
  if (!fields) return base;
  const out = { ...base };
  for (const [k, v] of Object.entries(redactFields(fields))) out[RESERVED.has(k) ? `${k}_field` : k] = v;
  return out;
}

export function powertoolsLogger(pt: PowertoolsLogger, base: Record<string, unknown> = {}): Logger {
  return {
    debug: (m, f) => pt.debug(m, attributes(base, f)),
    info: (m, f) => pt.info(m, attributes(base, f)),
    warn: (m, f) => pt.warn(m, attributes(base, f)),
    error: (m, f) => pt.error(m, attributes(base, f)),
    child: (fields) => powertoolsLogger(pt, attributes(base, fields)),
  };
}
