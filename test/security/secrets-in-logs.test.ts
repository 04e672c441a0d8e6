/**
 * Nothing secret or personal reaches a log line: the service runs with its
 * own logger at level trace, writing to a capture, while every flow of
 * secret-flows.ts runs; then none of the values those flows used may appear
 * anywhere in what was logged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startService, type TestService } from '../helpers.ts';
import { LogCapture } from './log-capture.ts';
import { SECRET_FLOWS } from './secret-flows.ts';

describe('secrets and personal data in logs', () => {
  const logs = new LogCapture();
  let svc: TestService;
  let ws: { id: number; key: string };
  const seen: string[] = [];

  before(async () => {
    svc = await startService({ logStream: logs.stream, env: { NODE_ENV: 'development', RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: 0 } });
    ws = await svc.workspace();
  });
  after(() => svc.stop());

  for (const flow of SECRET_FLOWS) {
    it(flow.name, async () => {
      const secrets = await flow.run({ svc, ws, logs });
      assert.ok(secrets.length > 0);
      seen.push(...secrets);
      logs.assertAbsent(secrets, flow.name);
    });
  }

  it('logged every request line, and none of the values of any flow, up to shutdown', async () => {
    assert.ok(logs.entries(/incoming request/).length > 20);
    await svc.stop();
    logs.assertAbsent(seen, 'after shutdown');
  });
});
