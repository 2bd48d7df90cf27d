import { withoutCost, INTERNAL_TOKEN, type CostExtension, type GraphQLResponse } from './public-api.ts';

export interface InternalAnswer {
  status: number;
  headers: Headers;
  body: GraphQLResponse;
  cost: CostExtension | undefined;
}

async function answerOf(response: Response): Promise<InternalAnswer> {
  const text = await response.text();
  let parsed: GraphQLResponse;
  try {
    parsed = JSON.parse(text) as GraphQLResponse;
  } catch {
    throw new Error(`not JSON (${response.status}): ${text.slice(0, 300)}`);
  }
  return { status: response.status, headers: response.headers, ...withoutCost(parsed) };
}

/** Any JSON body POSTed to the internal `/graphql` with a token: persisted forms, stray fields. */
export async function postGraphQL(internalUrl: string, token: string, body: unknown): Promise<InternalAnswer> {
  return answerOf(
    await fetch(`${internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }),
  );
}

/** A GET of the internal `/graphql` with these query parameters (Apollo Server's CSRF header sent). */
export async function getGraphQL(internalUrl: string, token: string, parameters: Record<string, string>): Promise<InternalAnswer> {
  return answerOf(
    await fetch(`${internalUrl}/graphql?${new URLSearchParams(parameters).toString()}`, {
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'apollo-require-preflight': 'true' },
    }),
  );
}

/** The value of one series of /metrics (0 when the series is absent), read with the bootstrap token. */
export async function metricValue(internalUrl: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort();
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2]!.split(/,(?=[a-z_]+=")/).sort();
    if (wanted.every((pair) => present.includes(pair)) && present.length === wanted.length) return Number(match[3]);
  }
  return 0;
}
