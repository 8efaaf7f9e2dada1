/**
 * The commands a deployment runs, and the only ones in the container image (bin/metal3fn-prod.ts):
 * nothing here may reach the embedded API server, SQS server or simulators (infra/local), which
 * test/e2e/image.test.ts checks in the image's bundle. Adding a command is one line.
 */
import type { CommandTable } from './main.ts';

export const PRODUCTION_COMMANDS: CommandTable = {
  relay: {
    summary: 'watch the cluster(s) and send key messages to the function queues',
    load: () => import('../commands/relay.ts'),
  },
  worker: {
    summary: 'long-poll the queues and run the functions',
    load: () => import('../commands/worker.ts'),
  },
  http: {
    summary: 'serve the functions over HTTP (CloudEvents, for Knative)',
    load: () => import('../commands/http.ts'),
  },
  replay: {
    summary: 'run one function on one key, on a saved event, or drain a DLQ back',
    load: () => import('../commands/replay.ts'),
  },
  render: {
    summary: 'offline preview of metaData and networkData for a template',
    load: () => import('../commands/render.ts'),
  },
  template: {
    summary: 'render one Go template (text/template + sprig) as user data is rendered',
    load: () => import('../commands/template.ts'),
  },
  'migrate-provider-ids': {
    summary: 'plan (and with --apply roll) machines off legacy metal3://<uid> IDs',
    load: () => import('../commands/migrate-provider-ids.ts'),
  },
};
