/** The OpenAPI 3.1 `webhooks` section: one entry per event type, with its envelope and `data`, and the signature headers. */
import { TEST_EVENT_TYPE, WEBHOOK_EVENT_TYPES, EVENT_LABELS, dataSchemaOf, exampleData } from './event-types.ts';
import { RETRY_DELAYS_MS } from './schedule.ts';

const HEADERS = [
  { name: 'webhook-id', description: 'The event id (evt_…): the same on every retry and redelivery. Deduplicate on it.' },
  { name: 'webhook-timestamp', description: 'Seconds since the epoch when this attempt was signed. Refuse old ones (5 minutes) to stop replays.' },
  { name: 'webhook-signature', description: 'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the subscription\'s whsec_ secret (two during 24 hours after a rotation). Verify with any Standard Webhooks library.' },
];

export function openApiWebhooks(): Record<string, unknown> {
  const schedule = ['immediately', ...RETRY_DELAYS_MS.map((ms) => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`))].join(', ');
  const entries: Record<string, unknown> = {};
  for (const type of [...WEBHOOK_EVENT_TYPES, TEST_EVENT_TYPE] as const) {
    const label = type === TEST_EVENT_TYPE ? 'Test delivery' : EVENT_LABELS[type];
    const data = type === TEST_EVENT_TYPE ? { type: 'object', properties: { message: { type: 'string' } } } : JSON.parse(JSON.stringify(dataSchemaOf(type)));
    entries[type] = {
      post: {
        summary: label,
        description:
          `Sent to subscriptions that selected \`${type}\` (provider \`standard\`; Slack, Discord and Teams subscriptions get a message in their own format, signed the same way). ` +
          `A 2xx answer within 15 s is success; anything else is retried (${schedule}, ±10 % jitter); 410 Gone deactivates the subscription; 429 and 503 honour Retry-After.`,
        tags: ['Webhooks'],
        parameters: HEADERS.map((h) => ({ in: 'header', name: h.name, required: type !== TEST_EVENT_TYPE || true, description: h.description, schema: { type: 'string' } })),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object', required: ['type', 'timestamp', 'data'],
                properties: { type: { type: 'string', const: type }, timestamp: { type: 'string', format: 'date-time', description: 'When the event happened.' }, data },
              },
              example: { type, timestamp: '2026-03-01T09:30:00.000Z', data: exampleData(type) },
            },
          },
        },
        responses: { '2XX': { description: 'Received. Any other answer (or none within 15 s) is a failed attempt.' }, 410: { description: 'Gone: deactivates the subscription.' } },
      },
    };
  }
  return entries;
}
