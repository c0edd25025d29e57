import unittest

from inventory.pricing import apply_discount, format_price


class PricingTest(unittest.TestCase):
    def test_discount_rounds_half_up(self):
        self.assertEqual(apply_discount(999, 10), 899)
        self.assertEqual(apply_discount(5, 50), 3)

    def test_format_price(self):
        self.assertEqual(format_price(1234), "12.34 USD")
        self.assertEqual(format_price(-5), "-0.05 USD")


if __name__ == "__main__":
    unittest.main()
