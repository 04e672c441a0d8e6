/** A document fetched for the MCP upload tool, through the SSRF-safe outbound client. */
import type { OutboundClient } from '../../platform/outbound/outbound-client.ts';

const DOWNLOAD_TIMEOUT_MS = 60_000;

export async function downloadDocument(outbound: OutboundClient, url: string, maxBytes: number): Promise<{ bytes: Buffer; filename: string; contentType: string }> {
  const response = await outbound.request(url, { timeoutMs: DOWNLOAD_TIMEOUT_MS, maxResponseBytes: maxBytes });
  if (response.status < 200 || response.status >= 300) throw new Error(`the server answered HTTP ${response.status}`);
  const header = (name: string) => {
    const value = response.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const disposition = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(header('content-disposition') ?? '');
  const fromPath = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  const filename = (disposition ? decodeURIComponent(disposition[1]!) : fromPath) || 'document';
  return { bytes: response.body, filename: filename.slice(0, 200), contentType: header('content-type')?.split(';')[0] ?? 'application/octet-stream' };
}
