/** The real kubectl, a child process with KUBECONFIG (the conformance suite and the tests that read back with it). */
import { execFile, spawnSync } from 'node:child_process';

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

let available: boolean | undefined;
/** kubectl cases need the binary (installed at /usr/bin/kubectl here); elsewhere they skip, saying why. */
export function kubectlAvailable(): boolean {
  available ??= spawnSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' }).status === 0;
  return available;
}

export function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      KUBECTL,
      args,
      { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`kubectl ${args.join(' ')} failed: ${stderr || err.message}`));
        else resolve(stdout);
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Runs kubectl and resolves with its exit code and stdout, whatever the code. */
export function kubectlExit(
  kubeconfig: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      args,
      { env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}
