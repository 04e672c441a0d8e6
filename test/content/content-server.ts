/** A real local HTTP server for product and article images (127.0.0.1, allowed by OUTBOUND_ALLOWED_HOSTS in the tests). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

export interface ImageServer {
  url: string;
  /** Paths requested, in order. */
  hits: string[];
  close(): Promise<void>;
}

export async function colourImage(hue: number, format: 'jpeg' | 'png' = 'jpeg', size = 200): Promise<Buffer> {
  const r = Math.round(127 + 120 * Math.cos(hue));
  const g = Math.round(127 + 120 * Math.cos(hue + 2));
  const b = Math.round(127 + 120 * Math.cos(hue + 4));
  const image = sharp({ create: { width: size, height: size, channels: 3, background: { r, g, b } } });
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 80 }).toBuffer();
}

/** Serves /img/{n}.jpg as a generated JPEG, /product/{n} as a product page; /missing.jpg answers 404; /not-image.jpg answers HTML. */
export async function startImageServer(): Promise<ImageServer> {
  const hits: string[] = [];
  const cache = new Map<string, Buffer>();
  const server = http.createServer(async (req, res) => {
    hits.push(req.url ?? '');
    const match = /^\/img\/(\d+)\.jpg$/.exec(req.url ?? '');
    if (match) {
      let body = cache.get(match[1]!);
      if (!body) { body = await colourImage(Number(match[1])); cache.set(match[1]!, body); }
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': body.length });
      res.end(body);
      return;
    }
    const product = /^\/product\/(\d+)$/.exec(req.url ?? '');
    if (product) { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(`<!doctype html><title>Product ${product[1]}</title><h1>Product ${product[1]}</h1>`); return; }
    if (req.url === '/not-image.jpg') { res.writeHead(200, { 'content-type': 'image/jpeg' }); res.end('<html>nope</html>'); return; }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
