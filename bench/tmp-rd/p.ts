import { readFile } from 'node:fs/promises';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { pdfjsDocumentOptions } from '/work/wt-readable/src/modules/conversion/pdfjs-options.ts';
const data = new Uint8Array(await readFile(process.argv[2]!));
let t = performance.now();
const doc = await getDocument(pdfjsDocumentOptions(data, undefined, 2 ** 26)).promise;
console.log('open', (performance.now() - t).toFixed(0));
let tText = 0, tAnn = 0, tPage = 0;
for (let i = 1; i <= doc.numPages; i++) {
  let a = performance.now(); const page = await doc.getPage(i); tPage += performance.now() - a;
  a = performance.now(); await page.getTextContent(); tText += performance.now() - a;
  a = performance.now(); await page.getAnnotations({ intent: 'display' }); tAnn += performance.now() - a;
  page.cleanup();
}
console.log({ pages: doc.numPages, tPage: tPage.toFixed(0), tText: tText.toFixed(0), tAnn: tAnn.toFixed(0), total: (performance.now() - t).toFixed(0) });
