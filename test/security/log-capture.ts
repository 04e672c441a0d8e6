/**
 * Captures everything the service logs (level trace, through the service's
 * own logger and serializers) so tests can assert what never reaches a log.
 *
 *   const logs = new LogCapture();
 *   const svc = await startService({ logStream: logs.stream });
 *   …drive a flow…
 *   logs.assertAbsent(['wsk_live_…', 'ann@example.com'], 'keys flow');
 */
import assert from 'node:assert/strict';
import type { DestinationStream } from 'pino';

export class LogCapture {
  private readonly chunks: string[] = [];
  readonly stream: DestinationStream = { write: (chunk: string) => void this.chunks.push(chunk) };

  /** Everything logged so far, one JSON line per entry. */
  get text(): string {
    return this.chunks.join('');
  }

  /** The parsed entries, optionally those whose message matches. */
  entries(msg?: RegExp): Record<string, any>[] {
    return this.text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((entry) => !msg || msg.test(String(entry.msg)));
  }

  /** Fails naming the first secret found in the log, with the line that holds it. */
  assertAbsent(secrets: readonly string[], label: string): void {
    const text = this.text;
    for (const secret of secrets) {
      assert.ok(secret.length >= 6, `secret values must be distinctive (${label}: "${secret}")`);
      for (const form of new Set([secret, secret.toLowerCase(), JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])) {
        const at = text.indexOf(form);
        if (at !== -1) {
          const line = text.slice(text.lastIndexOf('\n', at) + 1, text.indexOf('\n', at));
          assert.fail(`${label}: the log holds "${secret}":\n${line}`);
        }
      }
    }
  }
}
