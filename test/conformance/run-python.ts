/**
 * Runs a script with the official Kubernetes Python client (Debian's python3-kubernetes, under
 * /usr/bin/python3: the `python3` on PATH may lack the module), against a kubeconfig. The script
 * reads its argument as JSON from `ARG` and prints one JSON value, which is returned.
 */
import { execFile, spawnSync } from 'node:child_process';

export const PYTHON = process.env.CONFORMANCE_PYTHON ?? '/usr/bin/python3';

let available: boolean | undefined;
export function pythonClientAvailable(): boolean {
  available ??= spawnSync(PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0;
  return available;
}

const PRELUDE = `
import json, os, sys
from kubernetes import client, config
config.load_kube_config(config_file=os.environ["KUBECONFIG"])
ARG = json.loads(os.environ.get("ARG", "null"))
`;

export function runPython(kubeconfig: string, script: string, arg?: unknown): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      ['-c', `${PRELUDE}\n${script}`],
      { env: { ...process.env, KUBECONFIG: kubeconfig, ARG: JSON.stringify(arg ?? null) }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`python client failed: ${stderr || err.message}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}
