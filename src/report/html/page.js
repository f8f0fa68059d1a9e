// Placeholder until the real page: decodes the data and prints the summary.
(async () => {
  const el = document.getElementById('lowalloc-data');
  let text = el.textContent;
  if (el.dataset.encoding === 'gzip-base64') {
    const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    text = await new Response(stream).text();
  }
  const data = JSON.parse(text);
  document.title = data.title;
  document.getElementById('summary').textContent = data.summary_text;
})().catch((e) => { document.getElementById('error').textContent = String(e); });
