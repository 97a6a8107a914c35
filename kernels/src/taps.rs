//! One output pixel's in-image taps as the register-blocked convolutions (CONV_2D over an
//! HWIO filter, DEPTHWISE_CONV_2D) walk them: a rectangle of the filter (the taps whose input pixel lies
//! inside the image), the input and filter indices of its first tap, and the index steps
//! from tap to tap.

use crate::padding::Window;

/// The in-image taps of one output pixel: `rows × cols` of them; tap `(r, k)` reads input
/// index `first_input + r * input_row + k * input_col` and filter index
/// `first_filter + r * filter_row + k * filter_col`.
pub(crate) struct Taps {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) first_input: usize,
    pub(crate) first_filter: usize,
    pub(crate) input_row: usize,
    pub(crate) input_col: usize,
    pub(crate) filter_row: usize,
    pub(crate) filter_col: usize,
}

impl Taps {
    /// Output pixel `(batch, oy, ox)`'s taps under window `w` over an input of
    /// `(height, width, depth)` and a filter of `(height, width)` taps, each tap's weights
    /// `tap_len` long (the depth for a depthwise filter, depth × output channels for an
    /// HWIO one). A window wholly in the padding has none (and first indices 0).
    #[inline(always)]
    pub(crate) fn of_pixel(
        w: &Window,
        (ih, iw, id): (usize, usize, usize),
        (fh, fw): (usize, usize),
        tap_len: usize,
        (batch, oy, ox): (usize, usize, usize),
    ) -> Self {
        let (y0, ys) = w.rows_in_image(oy, ih, fh);
        let (x0, xs) = w.cols_in_image(ox, iw, fw);
        let (rows, cols) = (ys.len(), xs.len());
        let (first_input, first_filter) = if rows == 0 || cols == 0 {
            (0, 0)
        } else {
            let y = (y0 + (w.dilation_height * ys.start) as isize) as usize;
            let x = (x0 + (w.dilation_width * xs.start) as isize) as usize;
            (
                ((batch * ih + y) * iw + x) * id,
                (ys.start * fw + xs.start) * tap_len,
            )
        };
        Taps {
            rows,
            cols,
            first_input,
            first_filter,
            input_row: w.dilation_height * iw * id,
            input_col: w.dilation_width * id,
            filter_row: fw * tap_len,
            filter_col: tap_len,
        }
    }

    /// Whether `input_width` bytes from every tap's input index and `filter_width` from its
    /// filter index lie inside `input` and `filter` (true where there is no tap).
    pub(crate) fn fit(
        &self,
        input: &[i8],
        filter: &[i8],
        input_width: usize,
        filter_width: usize,
    ) -> bool {
        if self.rows == 0 || self.cols == 0 {
            return true;
        }
        let end = |first: usize, row: usize, col: usize, width: usize| {
            (self.rows - 1)
                .checked_mul(row)?
                .checked_add((self.cols - 1).checked_mul(col)?)?
                .checked_add(first)?
                .checked_add(width)
        };
        let inside = |end: Option<usize>, len: usize| end.is_some_and(|e| e <= len);
        let input_end = end(
            self.first_input,
            self.input_row,
            self.input_col,
            input_width,
        );
        let filter_end = end(
            self.first_filter,
            self.filter_row,
            self.filter_col,
            filter_width,
        );
        inside(input_end, input.len()) && inside(filter_end, filter.len())
    }
}
