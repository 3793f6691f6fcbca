//! Listings: `limit` (1-100, default 20) and `offset` (0 to `MAX_OFFSET`) in, the `List`
//! envelope out, with a `next_page_url` that continues the same listing. The OpenAPI document
//! states both ranges from the constants here.

use app::api::List;

use super::error::{ApiError, ApiResult, ErrorCode};

/// A page of listing, as asked for.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: u32,
    pub offset: u64,
}

impl Page {
    pub const DEFAULT_LIMIT: u32 = 20;
    pub const MAX_LIMIT: u32 = 100;
    /// The largest offset the databases take (a signed 64-bit `OFFSET`); a larger one is
    /// refused rather than quietly read as this.
    pub const MAX_OFFSET: u64 = i64::MAX as u64;

    pub fn parse(limit: Option<u32>, offset: Option<u64>) -> ApiResult<Page> {
        let limit = limit.unwrap_or(Self::DEFAULT_LIMIT);
        if !(1..=Self::MAX_LIMIT).contains(&limit) {
            return Err(ApiError::new(
                ErrorCode::ParameterInvalid,
                format!("limit must be between 1 and {}", Self::MAX_LIMIT),
            )
            .with_param("limit"));
        }
        let offset = offset.unwrap_or(0);
        if offset > Self::MAX_OFFSET {
            return Err(ApiError::new(
                ErrorCode::ParameterInvalid,
                format!("offset must be between 0 and {}", Self::MAX_OFFSET),
            )
            .with_param("offset"));
        }
        Ok(Page { limit, offset })
    }

    /// Cuts the one extra row the store fetched and builds the listing envelope.
    pub fn list<T>(
        self,
        mut rows: Vec<T>,
        path: &str,
        filters: &[(&str, Option<&str>)],
    ) -> List<T> {
        let has_more = rows.len() > self.limit as usize;
        rows.truncate(self.limit as usize);
        let next_page_url = has_more.then(|| {
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("limit", &self.limit.to_string());
            q.append_pair("offset", &(self.offset + u64::from(self.limit)).to_string());
            for (name, value) in filters {
                if let Some(v) = value {
                    q.append_pair(name, v);
                }
            }
            format!("{path}?{}", q.finish())
        });
        List {
            data: rows,
            has_more,
            limit: self.limit,
            offset: self.offset,
            next_page_url,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_offsets_outside_their_ranges_are_refused() {
        let page = Page::parse(None, None).unwrap();
        assert_eq!((page.limit, page.offset), (Page::DEFAULT_LIMIT, 0));
        let last = Page::parse(Some(100), Some(Page::MAX_OFFSET)).unwrap();
        assert_eq!((last.limit, last.offset), (100, Page::MAX_OFFSET));

        for (limit, offset, param) in [
            (Some(0), None, "limit"),
            (Some(101), None, "limit"),
            (None, Some(Page::MAX_OFFSET + 1), "offset"),
            (None, Some(u64::MAX), "offset"),
        ] {
            let err = Page::parse(limit, offset).unwrap_err();
            assert_eq!(err.code(), ErrorCode::ParameterInvalid);
            assert_eq!(err.param(), Some(param));
        }
    }
}
