/**
 * The body each provider expects. `standard` is the Standard Webhooks JSON
 * envelope `{ type, timestamp, data }`, which Zapier ("Catch Hook"), Make
 * ("Custom webhook"), n8n ("Webhook" node), Pipedream and your own server
 * take as is. Chat tools only accept their own message shapes, so for them the
 * event is written as a short message (with the full event attached where the
 * format allows): Slack incoming webhooks `{ text, blocks }`, Discord webhooks
 * `{ content, embeds }`, Microsoft Teams (Workflows "post to a channel when a
 * webhook request is received") an Adaptive Card message.
 * Every provider's request carries the Standard Webhooks signature headers.
 */
import { EVENT_LABELS, isWebhookEventType } from './event-types.ts';

export const PROVIDERS = [
  { value: 'standard', label: 'Standard Webhooks JSON (your server, Zapier, Make, n8n, Pipedream)' },
  { value: 'slack', label: 'Slack incoming webhook' },
  { value: 'discord', label: 'Discord webhook' },
  { value: 'teams', label: 'Microsoft Teams (Workflows webhook)' },
] as const;
export type Provider = (typeof PROVIDERS)[number]['value'];
export const PROVIDER_VALUES = PROVIDERS.map((p) => p.value);

export interface WebhookEnvelope {
  type: string;
  timestamp: string;
  data: unknown;
}

function labelOf(type: string): string {
  return isWebhookEventType(type) ? EVENT_LABELS[type] : type === 'webhook.test' ? 'Test delivery' : type;
}

/** One line a person reads in a chat channel. */
export function summarise(envelope: WebhookEnvelope): string {
  const data = (envelope.data ?? {}) as Record<string, unknown>;
  const parts = [`*${labelOf(envelope.type)}*`];
  if (typeof data.book_id === 'string') parts.push(`book ${data.book_id}`);
  if (typeof data.page_number === 'number') parts.push(`page ${data.page_number}`);
  const meta = Array.isArray(data.metadata) ? (data.metadata[0] as Record<string, unknown> | undefined) : undefined;
  if (meta && typeof meta.url === 'string') parts.push(meta.url);
  if (typeof data.email === 'string') parts.push(data.email);
  if (typeof data.message === 'string') parts.push(data.message);
  return parts.join(' · ');
}

/** The exact body sent to a subscription of this provider (this string is what is signed and logged). */
export function renderBody(provider: string, envelope: WebhookEnvelope): string {
  const text = summarise(envelope);
  const json = JSON.stringify(envelope.data, null, 1);
  switch (provider) {
    case 'slack':
      return JSON.stringify({
        text: text.replace(/\*/g, ''),
        blocks: [
          { type: 'section', text: { type: 'mrkdwn', text } },
          { type: 'context', elements: [{ type: 'mrkdwn', text: `\`${envelope.type}\` at ${envelope.timestamp}` }] },
        ],
      });
    case 'discord':
      return JSON.stringify({
        content: text.replace(/\*/g, '**').slice(0, 2000),
        embeds: [{ title: envelope.type, timestamp: envelope.timestamp, description: `\`\`\`json\n${json.slice(0, 3900)}\n\`\`\`` }],
        allowed_mentions: { parse: [] },
      });
    case 'teams':
      return JSON.stringify({
        type: 'message',
        attachments: [{
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', type: 'AdaptiveCard', version: '1.4',
            body: [
              { type: 'TextBlock', text: text.replace(/\*/g, '**'), wrap: true },
              { type: 'TextBlock', text: `${envelope.type} at ${envelope.timestamp}`, isSubtle: true, size: 'Small', wrap: true },
            ],
          },
        }],
      });
    default:
      return JSON.stringify(envelope);
  }
}
