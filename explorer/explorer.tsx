import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { GraphiQL } from 'graphiql';
import { useMemo, useRef, useState, type FormEvent } from 'react';
import { DEFAULT_QUERY, DEFAULT_VARIABLES } from './default-query.ts';

/** The endpoint the explorer queries: the page's own listener. */
const GRAPHQL_PATH = '/graphql';

type TokenState = { kind: 'none' } | { kind: 'entered' } | { kind: 'refused'; status: number };

/**
 * GraphiQL with a token field above it. The token is kept in this component's memory only: it
 * leaves the page as the Authorization header of the POST requests to /graphql, never in a URL,
 * and is never written to storage (GraphiQL's headers editor, which it may persist, is off).
 */
export function Explorer() {
  // A new object on every submit, so that entering the same token again loads the schema again.
  const [entered, setEntered] = useState<{ token: string }>({ token: '' });
  const [state, setState] = useState<TokenState>({ kind: 'none' });
  const field = useRef<HTMLInputElement>(null);
  const fetcher = useMemo(
    () =>
      createGraphiQLFetcher({
        url: GRAPHQL_PATH,
        enableIncrementalDelivery: false,
        headers: { Authorization: `Bearer ${entered.token}` },
        fetch: async (input, init) => {
          const response = await fetch(input, { ...init, credentials: 'omit', cache: 'no-store' });
          if (response.status === 401 || response.status === 403) setState({ kind: 'refused', status: response.status });
          return response;
        },
      }),
    [entered],
  );

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const token = field.current?.value.trim() ?? '';
    if (token === '') return;
    setEntered({ token });
    setState({ kind: 'entered' });
  };

  return (
    <div className="explorer">
      {/* No action and no method: the form is only ever handled here, never submitted. */}
      <form className="explorer-token" onSubmit={onSubmit}>
        <label htmlFor="explorer-token-input">Internal API token</label>
        {/* Without a name attribute the field could never be submitted with the form. */}
        <input id="explorer-token-input" ref={field} type="password" autoComplete="off" spellCheck={false} placeholder="INTERNAL_API_TOKEN or a named token" />
        <button type="submit">Use token</button>
        <output role="status" className={`explorer-token-status explorer-token-${state.kind}`}>
          {state.kind === 'none' && 'Enter a token to load the schema and run queries.'}
          {state.kind === 'entered' && 'The token is sent as the Authorization header of each request and kept only in this page.'}
          {state.kind === 'refused' && `The service refused this token (HTTP ${state.status}): enter a valid token.`}
        </output>
      </form>
      {state.kind !== 'none' && (
        <GraphiQL
          fetcher={fetcher}
          defaultTabs={[{ query: DEFAULT_QUERY, variables: DEFAULT_VARIABLES }]}
          isHeadersEditorEnabled={false}
          shouldPersistHeaders={false}
        />
      )}
    </div>
  );
}
