/**
 * AwsParametersDouble: a named test double of the two AWS APIs a Lambda reads its kubeconfig from,
 * speaking their JSON protocol (awsJson1_1: POST / with `X-Amz-Target`) on 127.0.0.1, so the real
 * AWS SDK clients under Powertools Parameters talk to it when pointed at it
 * (AWS_ENDPOINT_URL_SECRETS_MANAGER / AWS_ENDPOINT_URL_SSM):
 *
 *   secretsmanager.GetSecretValue  {SecretId}              → {ARN, Name, SecretString, VersionId, ...}
 *   AmazonSSM.GetParameter         {Name, WithDecryption}  → {Parameter: {Name, Type, Value, Version, ...}}
 *
 * A missing name answers as AWS does (400, ResourceNotFoundException / ParameterNotFound); an
 * unsigned request is refused (403). Only these two operations; anything else is refused (400).
 * Every call is recorded, and `failing` makes every call answer 500 (an outage).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

export interface ParametersCall {
  target: string;
  name: string;
  withDecryption?: boolean;
}

export interface AwsParametersDouble {
  /** The endpoint URL for the SDK. */
  url: string;
  /** Stores (or rotates) a secret's SecretString; each change is a new version. */
  putSecret(name: string, value: string): void;
  /** Stores (or rotates) a SecureString parameter; each change bumps its Version. */
  putParameter(name: string, value: string): void;
  readonly calls: ParametersCall[];
  /** Whether every call fails with a 500 (InternalServiceError). */
  failing: boolean;
  stop(): Promise<void>;
}

interface Stored {
  value: string;
  version: number;
  changed: number;
}

function put(store: Map<string, Stored>, name: string, value: string): void {
  const old = store.get(name);
  store.set(name, { value, version: (old?.version ?? 0) + 1, changed: Math.floor(Date.now() / 1000) });
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const parsed: unknown = text ? JSON.parse(text) : {};
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('not an object');
  return parsed as Record<string, unknown>;
}

export async function startAwsParametersDouble(): Promise<AwsParametersDouble> {
  const secrets = new Map<string, Stored>();
  const parameters = new Map<string, Stored>();
  const calls: ParametersCall[] = [];
  const state = { failing: false };

  const answer = (res: ServerResponse, status: number, payload: unknown) => {
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify(payload));
  };
  const fault = (res: ServerResponse, status: number, type: string, message: string) =>
    answer(res, status, { __type: type, message });

  const server = createServer((req, res) => {
    void (async () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      if (req.method !== 'POST' || req.url !== '/')
        return fault(res, 400, 'UnknownOperationException', `${req.method} ${req.url}`);
      if (!String(req.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '))
        return fault(res, 403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
      let input: Record<string, unknown>;
      try {
        input = await body(req);
      } catch {
        return fault(res, 400, 'SerializationException', 'request body is not a JSON object');
      }
      if (target === 'secretsmanager.GetSecretValue') {
        const name = String(input.SecretId ?? '');
        calls.push({ target, name });
        if (state.failing) return fault(res, 500, 'InternalServiceError', 'the double is failing');
        const s = secrets.get(name);
        if (!s)
          return fault(
            res,
            400,
            'ResourceNotFoundException',
            "Secrets Manager can't find the specified secret.",
          );
        return answer(res, 200, {
          ARN: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${name}-AbCdEf`,
          Name: name,
          VersionId: `v${s.version}`,
          SecretString: s.value,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: s.changed,
        });
      }
      if (target === 'AmazonSSM.GetParameter') {
        const name = String(input.Name ?? '');
        calls.push({ target, name, withDecryption: input.WithDecryption === true });
        if (state.failing) return fault(res, 500, 'InternalServerError', 'the double is failing');
        const p = parameters.get(name);
        if (!p) return fault(res, 400, 'ParameterNotFound', `Parameter ${name} not found.`);
        return answer(res, 200, {
          Parameter: {
            Name: name,
            Type: 'SecureString',
            // A SecureString read without decryption is its ciphertext, as SSM answers.
            Value: input.WithDecryption === true ? p.value : Buffer.from(`kms:${p.value}`).toString('base64'),
            Version: p.version,
            LastModifiedDate: p.changed,
            ARN: `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter${name.startsWith('/') ? '' : '/'}${name}`,
            DataType: 'text',
          },
        });
      }
      return fault(res, 400, 'UnknownOperationException', `operation ${target} is not in this double`);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    putSecret: (name, value) => put(secrets, name, value),
    putParameter: (name, value) => put(parameters, name, value),
    calls,
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
