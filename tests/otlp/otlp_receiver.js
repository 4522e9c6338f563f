// A loopback OTLP/HTTP receiver for the exporter's end-to-end tests: decodes
// every request with the official definitions (protobuf, or JSON), and
// answers by a plan, so the tests can play a collector that is slow, down,
// refusing or picky.
//
//   node otlp_receiver.js <decoder dir> <out dir> [plan]
//
// Prints the port it listens on (127.0.0.1, or OTLP_RECEIVER_HOST: a test
// of a proxy needs an address that is not loopback) as its first line. With
// OTLP_RECEIVER_TLS_CERT and OTLP_RECEIVER_TLS_KEY (PEM files) it speaks https. The plan is
// a comma-separated list of steps for the requests in order, the last one
// repeating: an HTTP status ("200", "401", "404", ...; "503" and "429" with
// Retry-After: 1), "close" (drops the connection without answering), each
// optionally "xN" for N requests ("503x2,200"); "413>N" answers 413 to
// bodies over N bytes and 200 to the rest; "slowN" answers 200 after N ms
// (a collector slow to acknowledge).
// Writes <out dir>/arrived.jsonl (a line per request as it arrives, before
// its answer), <out dir>/requests.jsonl (one line per request once
// answered: status, spans, bytes, gzip, content type) and
// <out dir>/accepted.json (one request holding every span of every 2xx
// request, for otlp_check.js tree).
'use strict';
const http = require('http');
const https = require('https');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const [decoderDir, outDir, planText = '200'] = process.argv.slice(2);
const root = require(path.resolve(decoderDir) + '/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const plan = [];
for (const step of planText.split(',')) {
  const big = /^413>(\d+)$/.exec(step);
  if (big) { plan.push({ kind: '413>', limit: Number(big[1]), count: Infinity }); continue; }
  const slow = /^slow(\d+)(?:x(\d+))?$/.exec(step);
  if (slow) { plan.push({ kind: 'slow', delay: Number(slow[1]), count: slow[2] ? Number(slow[2]) : 1 }); continue; }
  const [kind, count] = step.split('x');
  plan.push({ kind, count: count ? Number(count) : 1 });
}
let stepIndex = 0;
function nextStep() {
  const step = plan[Math.min(stepIndex, plan.length - 1)];
  if (stepIndex < plan.length - 1 && --step.count === 0) stepIndex++;
  return step;
}

function hex(bytes) { return Buffer.from(bytes || []).toString('hex'); }

// Each span with its resource's attributes (`resource`, not an OTLP span
// field: the compatibility test reads which process a span belongs to).
function spansOf(message) {
  const spans = [];
  for (const rs of message.resourceSpans || []) {
    const resource = (rs.resource && rs.resource.attributes) || [];
    for (const ss of rs.scopeSpans || []) {
      for (const s of ss.spans || []) spans.push({ ...s, resource });
    }
  }
  return spans;
}

// The decoded spans in OTLP/JSON's shape (what otlp_check.js reads).
function asJsonSpan(s) {
  const value = (v) => {
    if ('stringValue' in v) return { stringValue: v.stringValue };
    if ('arrayValue' in v) return { arrayValue: { values: (v.arrayValue.values || []).map(value) } };
    if ('intValue' in v) return { intValue: String(v.intValue) };
    if ('boolValue' in v) return { boolValue: v.boolValue };
    if ('doubleValue' in v) return { doubleValue: v.doubleValue };
    return {};
  };
  return {
    traceId: hex(s.traceId), spanId: hex(s.spanId), parentSpanId: s.parentSpanId && s.parentSpanId.length ? hex(s.parentSpanId) : undefined,
    name: s.name, kind: s.kind, startTimeUnixNano: String(s.startTimeUnixNano), endTimeUnixNano: String(s.endTimeUnixNano),
    attributes: (s.attributes || []).map((a) => ({ key: a.key, value: value(a.value || {}) })),
    events: (s.events || []).map((e) => ({ name: e.name })),
    resource: (s.resource || []).map((a) => ({ key: a.key, value: value(a.value || {}) })),
    status: s.status && s.status.code ? { code: s.status.code, message: s.status.message } : undefined,
  };
}

const accepted = [];
fs.mkdirSync(outDir, { recursive: true });
// OTLP_RECEIVER_TLS_CERT / _KEY (PEM files): serve https instead.
const tls = process.env.OTLP_RECEIVER_TLS_CERT
  ? { cert: fs.readFileSync(process.env.OTLP_RECEIVER_TLS_CERT), key: fs.readFileSync(process.env.OTLP_RECEIVER_TLS_KEY) }
  : null;
const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = Buffer.concat(chunks);
    const gzip = req.headers['content-encoding'] === 'gzip';
    const type = req.headers['content-type'] || '';
    const record = { url: req.url, gzip, type, bytes: body.length };
    let spans = [];
    try {
      if (gzip) body = zlib.gunzipSync(body);
      if (type === 'application/json') {
        spans = spansOf(JSON.parse(body.toString('utf8')));
      } else {
        const message = Request.decode(body);
        const err = Request.verify(message);
        if (err) throw new Error(err);
        spans = spansOf(Request.toObject(message, { longs: String, bytes: Array, enums: Number })).map((s) => asJsonSpan({
          ...s, traceId: Buffer.from(s.traceId), spanId: Buffer.from(s.spanId), parentSpanId: s.parentSpanId ? Buffer.from(s.parentSpanId) : undefined }));
      }
    } catch (e) {
      record.error = String(e);
    }
    fs.appendFileSync(path.join(outDir, 'arrived.jsonl'), JSON.stringify({ url: req.url, bytes: record.bytes }) + '\n');
    const step = nextStep();
    let status = 200;
    if (record.error) status = 400;
    else if (step.kind === '413>') status = body.length > step.limit ? 413 : 200;
    else if (step.kind === 'slow') status = 200;
    else if (step.kind === 'close') { record.status = 'closed'; fs.appendFileSync(path.join(outDir, 'requests.jsonl'), JSON.stringify(record) + '\n'); req.socket.destroy(); return; }
    else status = Number(step.kind);
    record.status = status;
    record.spans = spans.length;
    record.spanIds = spans.map((s) => s.spanId);
    const answer = () => {
      if (req.socket.destroyed) {
        // The client gave up before the answer (a slow step): not acknowledged.
        record.status = 'abandoned';
        fs.appendFileSync(path.join(outDir, 'requests.jsonl'), JSON.stringify(record) + '\n');
        return;
      }
      if (status >= 200 && status < 300) {
        accepted.push(...spans);
        fs.writeFileSync(path.join(outDir, 'accepted.json'),
                         JSON.stringify({ resourceSpans: [{ resource: {}, scopeSpans: [{ scope: {}, spans: accepted }] }] }));
      }
      fs.appendFileSync(path.join(outDir, 'requests.jsonl'), JSON.stringify(record) + '\n');
      const headers = { 'Content-Type': 'application/x-protobuf' };
      if (status === 503 || status === 429) headers['Retry-After'] = '1';
      res.writeHead(status, headers);
      res.end();
    };
    if (step.kind === 'slow') setTimeout(answer, step.delay);
    else answer();
  });
};
const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
server.listen(Number(process.env.OTLP_RECEIVER_PORT || 0), process.env.OTLP_RECEIVER_HOST || '127.0.0.1', () => { console.log(server.address().port); });
process.on('SIGTERM', () => server.close(() => process.exit(0)));
