/**
 * What fingerprinting a version costs (docs/book-versions.md, "Pages across
 * versions"): the 8×8 average hash of N page images of 320 px (webp, as the
 * conversion stores them), beside a reference measured in the same run:
 * decoding the same images with sharp and nothing more.
 * Run: node bench/page-fingerprints.bench.ts [pages=200]
 */
import sharp from 'sharp';
import { averageHash, matchPages, textHash } from '../src/modules/books/page-fingerprints.ts';

const pages = Number(process.argv[2] ?? 200);
const images: Buffer[] = [];
for (let i = 0; i < pages; i++) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="452"><rect width="320" height="452" fill="#fff"/>` +
    `<text x="20" y="60" font-size="28" fill="#223">Page ${i + 1}</text><rect x="${20 + (i % 7) * 30}" y="${120 + (i % 5) * 40}" width="120" height="160" fill="#385"/></svg>`;
  images.push(await sharp(Buffer.from(svg)).webp({ quality: 80 }).toBuffer());
}
const time = async (run: () => Promise<unknown>) => {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
};
await time(async () => { for (const image of images.slice(0, 10)) await averageHash(image); }); // warm-up
const reference = await time(async () => { for (const image of images) await sharp(image).raw().toBuffer(); });
const hashes: string[] = [];
const hashing = await time(async () => { for (const image of images) hashes.push(await averageHash(image)); });
const prints = hashes.map((imageHash, i) => ({ pageNumber: i + 1, textHash: textHash(`Page ${i + 1}`), imageHash }));
const shifted = [{ pageNumber: 1, textHash: textHash('Inserted'), imageHash: hashes[0]! }, ...prints.map((p) => ({ ...p, pageNumber: p.pageNumber + 1 }))];
let matched = 0;
const matching = await time(async () => { matched = matchPages(shifted, prints).size; });
console.log(`# ${pages} pages of 320 px`);
console.log(`# reference: decode only      ${reference.toFixed(1)} ms (${(reference / pages).toFixed(2)} ms a page)`);
console.log(`# average hash (decode, grey, 8x8) ${hashing.toFixed(1)} ms (${(hashing / pages).toFixed(2)} ms a page)`);
console.log(`# match ${pages + 1} pages against ${pages} (one inserted first): ${matching.toFixed(1)} ms, ${matched} matched`);
