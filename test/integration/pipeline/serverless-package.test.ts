/**
 * serverless.yml packages offline (osls, the maintained Serverless Framework v3 fork, no AWS
 * credentials) and the CloudFormation it produces has what the design asks: FIFO queues with FIFO
 * DLQs (maxReceiveCount 12, the limit the handlers dead-letter at, ADR 017), visibility ≥ 6×
 * function timeout, SQS event sources with ReportBatchItemFailures and MaximumConcurrency,
 * nodejs22.x, and per-function IAM reaching only its own queues (including the visibility changes
 * of the retry backoff). The bundles are stand-ins here (`npm run build` makes the real ones); what is
 * checked is the deployment description.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../../events/envelope.ts';
import { MAX_RECEIVE_COUNT } from '../../../shared/queue/redelivery.ts';

const ROOT = new URL('../../../', import.meta.url).pathname;
const OSLS = join(ROOT, 'node_modules/osls/bin/serverless.js');
const cliMissing = !existsSync(OSLS);
const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

describe.skipIf(cliMissing)(
  `serverless.yml${cliMissing ? ' (SKIPPED: osls is not installed; run npm ci)' : ''}`,
  () => {
    it('packages offline and describes queues, DLQs, event sources and least-privilege roles', () => {
      const dir = mkdtempSync(join(tmpdir(), 'metal3fn-sls-'));
      cpSync(join(ROOT, 'serverless.yml'), join(dir, 'serverless.yml'));
      for (const fn of [...FUNCTION_NAMES, 'requeueForwarder']) {
        mkdirSync(join(dir, 'dist/lambda', fn), { recursive: true });
        writeFileSync(
          join(dir, 'dist/lambda', fn, 'index.mjs'),
          'export const handler = async () => ({ batchItemFailures: [] });\n',
        );
      }
      const env = {
        ...process.env,
        SLS_TELEMETRY_DISABLED: '1',
        SLS_NOTIFICATIONS_MODE: 'off',
        HOME: dir,
        // The kubeconfig kept in Secrets Manager (ADR 020): the roles may read that secret only.
        METAL3FN_KUBECONFIG_SECRET: 'metal3fn/management-kubeconfig',
      } as NodeJS.ProcessEnv;
      delete env.METAL3FN_KUBECONFIG_PARAMETER;
      for (const k of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE'])
        delete env[k];
      const r = spawnSync(process.execPath, [OSLS, 'package', '--stage', 'ci'], {
        cwd: dir,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(r.status, r.stderr || r.stdout).toBe(0);

      const tpl = JSON.parse(
        readFileSync(join(dir, '.serverless/cloudformation-template-update-stack.json'), 'utf8'),
      );
      const res = tpl.Resources as Record<string, { Type: string; Properties: any }>;
      for (const fn of FUNCTION_NAMES) {
        const C = cap(fn);
        const q = res[`${C}Queue`]!.Properties;
        const dlq = res[`${C}DeadLetterQueue`]!.Properties;
        const lambda = res[`${C}LambdaFunction`]!.Properties;
        expect(q.QueueName).toBe(`ci-metal3fn-${fn}.fifo`);
        expect(q.FifoQueue).toBe(true);
        expect(dlq.QueueName).toBe(`ci-metal3fn-${fn}-dlq.fifo`);
        expect(dlq.FifoQueue).toBe(true);
        expect(q.RedrivePolicy).toEqual({
          deadLetterTargetArn: { 'Fn::GetAtt': [`${C}DeadLetterQueue`, 'Arn'] },
          maxReceiveCount: 12,
        });
        // The handlers dead-letter at the same receive (the value reaches them in their environment).
        expect(MAX_RECEIVE_COUNT).toBe(12);
        expect(
          String(tpl.Resources[`${C}LambdaFunction`].Properties.Environment.Variables.MAX_RECEIVE_COUNT),
        ).toBe('12');
        expect(lambda.Runtime).toBe('nodejs22.x');
        expect(lambda.Handler).toBe(`dist/lambda/${fn}/index.handler`);
        expect(q.VisibilityTimeout).toBeGreaterThanOrEqual(6 * lambda.Timeout);
        expect(lambda.Role).toEqual({ 'Fn::GetAtt': [`${C}Role`, 'Arn'] });

        const esm = Object.values(res).find(
          (x) =>
            x.Type === 'AWS::Lambda::EventSourceMapping' &&
            x.Properties.EventSourceArn['Fn::GetAtt']?.[0] === `${C}Queue`,
        )!.Properties;
        expect(esm.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
        expect(esm.ScalingConfig.MaximumConcurrency).toBeGreaterThanOrEqual(2);
        expect(esm.BatchSize).toBeLessThanOrEqual(10);

        // Least privilege: every SQS statement of this role names only its own queue, its DLQ or the requeue queue.
        const statements = res[`${C}Role`]!.Properties.Policies.flatMap(
          (p: any) => p.PolicyDocument.Statement,
        );
        const targets = statements
          .flatMap((s: any) => [s.Resource].flat())
          .map((x: any) => x['Fn::GetAtt']?.[0]);
        expect(new Set(targets)).toEqual(new Set([`${C}Queue`, `${C}DeadLetterQueue`, 'RequeueQueue']));
        for (const s of statements) for (const a of [s.Action].flat()) expect(a).toMatch(/^sqs:/);
        const own = statements.filter(
          (s: any) => [s.Resource].flat()[0]?.['Fn::GetAtt']?.[0] === `${C}Queue`,
        );
        expect(own.flatMap((s: any) => [s.Action].flat())).toEqual(
          expect.arrayContaining(['sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl']),
        );
      }
      // Reading the kubeconfig: one managed policy, on the six function roles, for that one secret.
      expect(tpl.Conditions.KubeconfigInSecretsManager).toEqual({
        'Fn::Not': [{ 'Fn::Equals': ['metal3fn/management-kubeconfig', ''] }],
      });
      expect(tpl.Conditions.KubeconfigInParameterStore).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
      const read = res.KubeconfigReadPolicy as { Condition?: string; Properties: any };
      expect(read.Condition).toBe('KubeconfigInStore');
      const [secret, parameter] = read.Properties.PolicyDocument.Statement;
      expect(secret['Fn::If'][1]).toEqual({
        Effect: 'Allow',
        Action: ['secretsmanager:GetSecretValue'],
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':secretsmanager:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':secret:',
              'metal3fn/management-kubeconfig',
              '-??????',
            ],
          ],
        },
      });
      expect(parameter['Fn::If'][0]).toBe('KubeconfigInParameterStore');
      for (const fn of FUNCTION_NAMES) {
        const C = cap(fn);
        expect(res[`${C}Role`]!.Properties.ManagedPolicyArns).toContainEqual({
          'Fn::If': ['KubeconfigInStore', { Ref: 'KubeconfigReadPolicy' }, { Ref: 'AWS::NoValue' }],
        });
        const vars = res[`${C}LambdaFunction`]!.Properties.Environment.Variables;
        expect(vars.METAL3FN_KUBECONFIG_SECRET).toBe('metal3fn/management-kubeconfig');
        expect(String(vars.METAL3FN_KUBECONFIG_MAX_AGE)).toBe('300');
      }
      expect(res.RequeueQueue!.Properties.FifoQueue).toBeUndefined();
      const zip = readFileSync(join(dir, '.serverless/selectHost.zip'));
      expect(zip.includes(Buffer.from('dist/lambda/selectHost/index.mjs'))).toBe(true);
      expect(zip.includes(Buffer.from('dist/lambda/renderData'))).toBe(false);
    });
  },
);
