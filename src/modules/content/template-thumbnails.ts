/**
 * Template thumbnails are real renders: sample content (products with
 * generated colour images, an article with headings and a list) laid out by
 * the template, converted by the same pipeline as books, and stored once per
 * template and layout version under `templates/v1/` (public assets).
 */
import { readFile, rm, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { Storage } from '../../platform/storage/storage.ts';
import { convertDocument } from '../conversion/conversion.service.ts';
import { renderArticlesPdf, renderCatalogPdf, type RenderProduct } from './pdf-layout.ts';
import { TEMPLATES, type Template } from './templates.ts';
import { templateThumbnailKey } from './content-books.service.ts';

const WIDTHS = [320, 1024];
const NAMES = ['Linen shirt', 'Canvas sneakers', 'Leather wallet', 'Wool scarf', 'Denim jacket', 'Silk tie', 'Cotton socks', 'Rain coat', 'Sun hat', 'Travel bag', 'Belt', 'Gloves', 'Cap', 'Hoodie', 'Shorts', 'Boots'];

async function sampleImage(index: number): Promise<Buffer> {
  const hue = (index * 47) % 360;
  const [r, g, b] = hslToRgb(hue / 360, 0.45, 0.72);
  return sharp({ create: { width: 240, height: 240, channels: 3, background: { r, g, b } } }).jpeg({ quality: 80 }).toBuffer();
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const f = (n: number) => {
    const k = (n + h * 12) % 12;
    return Math.round(255 * (l - s * Math.min(l, 1 - l) * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

async function samplePdf(template: Template): Promise<{ pdf: Buffer; page: number }> {
  if (template.layout === 'article') {
    const image = await sampleImage(3);
    const result = await renderArticlesPdf({
      title: 'Sample',
      articles: [{
        title: 'Ten ideas for a brighter spring', author: 'Flipbook', date: '2026-03-01', categories: ['Guides'], excerpt: null, url: null, image: 'sample',
        html: '<h2>Start with light</h2><p>' + 'Open the curtains, move the plants, and let the rooms breathe again after a long winter. '.repeat(4) + '</p><ul><li>Swap heavy fabrics for linen</li><li>Add one bold colour</li><li>Clear one surface a day</li></ul><h2>Then add colour</h2><p>' + 'Small changes add up to a house that feels new without buying much at all. '.repeat(5) + '</p>',
      }],
      images: (url) => (url ? image : null),
    });
    return { pdf: result.pdf, page: 1 };
  }
  const count = template.layout === 'detail' ? 1 : template.columns * template.rows;
  const images = await Promise.all(Array.from({ length: count }, (_, i) => sampleImage(i)));
  const products: RenderProduct[] = Array.from({ length: count }, (_, i) => ({
    key: `sample-${i}`, title: NAMES[i % NAMES.length]!, price: `${(19 + i * 7).toFixed(2)}`, regularPrice: null, salePrice: i % 3 === 1 ? `${(15 + i * 7).toFixed(2)}` : null,
    currency: 'EUR', url: null, sku: `SKU-${100 + i}`, stockStatus: i % 4 === 3 ? 'outofstock' : 'instock', available: null,
    description: 'A sample product description: materials, sizes and care, laid out by the template.', image: `sample-${i}`,
  }));
  const result = await renderCatalogPdf({
    title: 'Sample catalog', cover: { title: 'Sample catalog' }, products, template,
    images: (url) => (url ? images[Number(url.split('-')[1])] ?? null : null),
  });
  return { pdf: result.pdf, page: 2 };
}

async function renderThumbnails(storage: Storage, template: Template): Promise<void> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-thumb-'));
  try {
    const { pdf, page } = await samplePdf(template);
    const filePath = path.join(workDir, 'sample.pdf');
    await writeFile(filePath, pdf);
    await convertDocument({ filePath, autoLinks: false, widths: WIDTHS, workDir, concurrency: 1 }, async (rendered) => {
      if (rendered.number !== page) return;
      for (const image of rendered.images) {
        await storage.put(templateThumbnailKey(template.id, image.requestedWidth), await readFile(image.path), { contentType: 'image/webp' });
      }
    });
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

const inFlight = new WeakMap<Storage, Promise<void>>();

/** Makes the thumbnails that are missing (once per storage and process; concurrent callers share the work). */
export function ensureTemplateThumbnails(storage: Storage): Promise<void> {
  let work = inFlight.get(storage);
  if (work) return work;
  work = (async () => {
    for (const template of TEMPLATES) {
      const present = await Promise.all(WIDTHS.map((w) => storage.stat(templateThumbnailKey(template.id, w))));
      if (present.every(Boolean)) continue;
      await renderThumbnails(storage, template);
    }
  })().catch((error: unknown) => {
    inFlight.delete(storage);
    throw error;
  });
  inFlight.set(storage, work);
  return work;
}
