/** What the explorer's first tab holds until the user changes it (GraphiQL keeps tabs in localStorage). */
export const DEFAULT_QUERY = `# Enter a token above, set workspaceId under Variables, run with Ctrl-Enter.
# Lists are connections: page with first/after, narrow with filter.
# The Docs button on the left lists every type, connection and filter.
query Workspace($workspaceId: ID!) {
  workspace(id: $workspaceId) {
    name
    courseRunsConnection(first: 5, filter: { status: { in: [PUBLISHED] } }) {
      totalCount
      edges { cursor node { id status template { title } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}
`;

export const DEFAULT_VARIABLES = `{ "workspaceId": "ws_..." }\n`;
