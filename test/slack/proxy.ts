/**
 * A loopback HTTP proxy in front of the real detection service. It forwards every request unchanged
 * and can hold each one back for `delayMs` first, to play a slow service; it also counts calls to
 * /v1/detect, which is how tests see that a request did (or did not) run a detection.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class DetectProxy {
  delayMs = 0;
  detectCalls = 0;
  /** JSON bodies of the /v1/detect calls, in order, to see exactly which text a request sent. */
  readonly detectBodies: { text: string; mode?: string; segments?: boolean }[] = [];
  /** The User-Agent header of each /v1/detect call, in order. */
  readonly detectUserAgents: (string | undefined)[] = [];
  private server: Server | undefined;
  private port = 0;

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const isDetect = req.method === 'POST' && req.url?.startsWith('/v1/detect') === true;
      if (isDetect) {
        this.detectCalls++;
        this.detectUserAgents.push(req.headers['user-agent']);
      }
      const chunks: Buffer[] = [];
      const forward = (): void => {
        const body = Buffer.concat(chunks);
        const upstream = request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        upstream.on('error', () => {
          if (!res.headersSent) res.writeHead(502);
          res.end();
        });
        upstream.end(body);
      };
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        // Recorded on arrival, not when forwarded: a call held back by `delayMs` must not show up
        // among the bodies of a later test (a watch test's last six bodies once held one).
        if (isDetect) {
          try {
            this.detectBodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string });
          } catch {
            // not JSON: the service will say so
          }
        }
        if (this.delayMs > 0) setTimeout(forward, this.delayMs);
        else forward();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
