import type { Server } from 'node:net';

/**
 * The URL a listening server is reached at, for logs and callers: its actual port (so port 0 reports
 * the one picked), loopback for the IPv4 wildcard, brackets around an IPv6 host.
 */
export function listenUrl(server: Server, host: string, configuredPort: number): string {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : configuredPort;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return `http://${urlHost}:${port}`;
}

/**
 * What a process that cannot listen because another holds its port (EADDRINUSE) says: the address,
 * and the variable that moves this one (most often it is a second start of the same thing).
 */
export function portInUseSentence(what: string, host: string, port: number, variable: string, command: string): string {
  return (
    `${host}:${port} is already in use (another ${what}, or another program, listens there). ` +
    `Stop that one, or start this one on another port with ${variable}, e.g. ${variable}=${port + 1} ${command}.`
  );
}
