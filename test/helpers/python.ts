/**
 * Runs snippets of the official Kubernetes Python client (Debian's python3-kubernetes, under the
 * system interpreter: a pyenv `python3` on PATH may lack the module) against a kubeconfig, so
 * tests can show what that client sees. The snippet gets `client`, `config`, `watch`, `json`,
 * the loaded kubeconfig and `args` (JSON from the test), and prints one JSON value as its answer.
 * Where the client is missing the cases skip, saying why, except under CI=true: there `.ci/run`
 * installs it, so its absence fails the run instead of passing it by skipping.
 */
import { execFile, spawnSync } from 'node:child_process';

export const PYTHON = process.env.KUBE_PYTHON ?? '/usr/bin/python3';

let available: boolean | undefined;
export function pythonClientAvailable(): boolean {
  available ??= spawnSync(PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0;
  return available;
}

/** Why the Python cases cannot run here, or undefined when they can; throws under CI. */
export function pythonClientMissing(): string | undefined {
  if (pythonClientAvailable()) return undefined;
  const why = `the official Python client is not importable by ${PYTHON} (apt-get install python3-kubernetes, or set KUBE_PYTHON)`;
  if (process.env.CI === 'true') throw new Error(`${why}: required under CI`);
  return why;
}

const PRELUDE = `
import json, os, sys
from kubernetes import client, config, watch
config.load_kube_config(config_file=os.environ['KUBECONFIG'])
args = json.loads(sys.argv[1])
`;

/** Runs `snippet` (Python, after the prelude) and resolves with the JSON it printed last. */
export function runPython<T = any>(kubeconfigPath: string, snippet: string, args: unknown = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      ['-c', `${PRELUDE}\n${snippet}`, JSON.stringify(args)],
      { env: { ...process.env, KUBECONFIG: kubeconfigPath }, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`python client snippet failed: ${stderr || err.message}`));
          return;
        }
        const last = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`python client snippet printed no JSON answer: ${stdout}${stderr}`));
        }
      },
    );
  });
}
